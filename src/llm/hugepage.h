/* hugepage.h - the local model's big buffers on 2 MiB pages (Linux) */
#ifndef ASKDB_LLM_HUGEPAGE_H
#define ASKDB_LLM_HUGEPAGE_H

#include <stddef.h>

/*
** Decoding a token reads every weight of the model once (about 1 GB for
** the default model), so a step is bound by memory, and with 4 KiB pages
** part of that time is spent walking page tables. Linux backs anonymous
** memory with 2 MiB pages only where it is asked to (transparent huge
** pages in "madvise" mode, Ubuntu's and this project's CI's default), and
** llama.cpp allocates its buffers (the repacked weights, the KV cache)
** with plain posix_memalign() and fills them before askdb sees them.
**
** So: hp_snapshot() records the process's anonymous writable mappings
** before llama.cpp allocates; hp_advise_new() then gives every mapping
** that appeared since, of at least HP_MIN_BYTES, MADV_HUGEPAGE (for pages
** faulted later) and MADV_COLLAPSE (Linux 6.1: the pages already there
** become huge pages now). Nothing else in the process is touched; the
** numbers computed are the same bits, only sooner. The price is at load:
** 1-2 s here for 656 MiB (the kernel finding and filling 2 MiB pages),
** so askdb_config.huge_pages chooses (askdb ask does without). Elsewhere
** than Linux both are no-ops.
**
** Any failure (no /proc, a kernel without THP or MADV_COLLAPSE, no huge
** page free) costs only the speed; it is never an error.
*/

#define HP_MIN_BYTES (16u << 20)

struct hp_range {
    unsigned long start, end;
};

struct hp_snap {
    struct hp_range *r;   /* sorted by start */
    size_t n;
    int off;              /* not asked for, or no /proc/self/maps */
};

/* Record the anonymous writable mappings now (when on). Never fails: on
** any error, or when off, the snapshot is marked off and hp_advise_new()
** does nothing. */
void hp_snapshot(struct hp_snap *s, int on);

/* Advise the parts of new anonymous writable mappings (not in `before`)
** of at least HP_MIN_BYTES; returns the bytes now on huge pages in them
** (AnonHugePages of /proc/self/smaps), 0 when none or off. Frees
** `before`. */
size_t hp_advise_new(struct hp_snap *before);

#endif
