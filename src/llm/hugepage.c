/* hugepage.c - the local model's big buffers on 2 MiB pages (see
** hugepage.h) */
#define _GNU_SOURCE   /* madvise(), MADV_HUGEPAGE */
#include "llm/hugepage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __linux__
#include <sys/mman.h>
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25   /* Linux 6.1; glibc 2.36's headers lack it */
#endif
#endif

#define HP_PAGE (2ul << 20)

/*
** One line of /proc/self/maps: "start-end perms offset dev inode [path]".
** 1 when it is an anonymous private writable mapping (no path, inode 0;
** "[heap]" and "[stack]" have names and are left alone), with its range.
*/
static int anon_rw(const char *line, struct hp_range *out)
{
    char perms[8], dev[16];
    unsigned long start, end, off, inode;
    int n = 0;

    if (sscanf(line, "%lx-%lx %7s %lx %15s %lu %n", &start, &end, perms, &off,
               dev, &inode, &n) < 6 || n == 0)
        return 0;
    if (strcmp(perms, "rw-p") != 0 || inode != 0)
        return 0;
    while (line[n] == ' ')
        n++;
    if (line[n] != '\0' && line[n] != '\n')
        return 0;
    out->start = start;
    out->end = end;
    return 1;
}

#ifdef __linux__
/* The anonymous writable mappings of the process into s (by address, as
** the kernel lists them). Returns 0, or -1 (s empty) when they cannot be
** read. */
static int read_maps(struct hp_snap *s)
{
    char line[512];
    FILE *f;
    struct hp_range r, *grown;
    size_t cap = 0;

    f = fopen("/proc/self/maps", "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f)) {
        if (!strchr(line, '\n')) {     /* a path longer than the line */
            int ch;

            while ((ch = getc(f)) != EOF && ch != '\n')
                ;
            continue;
        }
        if (!anon_rw(line, &r))
            continue;
        if (s->n == cap) {
            cap = cap ? 2 * cap : 64;
            grown = realloc(s->r, cap * sizeof *grown);
            if (!grown) {
                fclose(f);
                free(s->r);
                s->r = NULL;
                s->n = 0;
                return -1;
            }
            s->r = grown;
        }
        s->r[s->n++] = r;
    }
    fclose(f);
    return 0;
}
#endif

void hp_snapshot(struct hp_snap *s, int on)
{
    s->r = NULL;
    s->n = 0;
    s->off = 1;
#ifdef __linux__
    if (on && read_maps(s) == 0)
        s->off = 0;
#else
    (void)on;
#endif
}

#ifdef __linux__
/*
** Give [start, end) the advice, in its 2 MiB-aligned interior, and
** collapse what is there already one huge page at a time: over the whole
** range the kernel gives up at the first piece it cannot collapse (one
** not yet touched: EINVAL), which left 63 of the 656 MiB it could do.
*/
static int advise(unsigned long start, unsigned long end)
{
    unsigned long a = (start + HP_PAGE - 1) & ~(HP_PAGE - 1);
    unsigned long b = end & ~(HP_PAGE - 1), x;

    if (b <= a || b - a < HP_MIN_BYTES)
        return 0;
    if (madvise((void *)a, b - a, MADV_HUGEPAGE) != 0)
        return 0;
    for (x = a; x < b; x += HP_PAGE)
        (void)madvise((void *)x, HP_PAGE, MADV_COLLAPSE);   /* best effort */
    return 1;
}

/* Sum AnonHugePages (kB) of the mappings inside the advised ranges. */
static size_t huge_bytes(const struct hp_range *adv, size_t nadv)
{
    char line[512];
    FILE *f = fopen("/proc/self/smaps", "r");
    unsigned long start = 0, end = 0, kb;
    size_t total = 0, i;
    int in = 0;
    char perms[8];

    if (!f)
        return 0;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%lx-%lx %4s", &start, &end, perms) == 3) {
            in = 0;
            for (i = 0; i < nadv; i++)
                if (start >= adv[i].start && end <= adv[i].end)
                    in = 1;
        } else if (in && sscanf(line, "AnonHugePages: %lu kB", &kb) == 1) {
            total += (size_t)kb << 10;
        }
    }
    fclose(f);
    return total;
}
#endif

size_t hp_advise_new(struct hp_snap *before)
{
    size_t got = 0;
#ifdef __linux__
    struct hp_snap now;
    struct hp_range *adv = NULL;
    size_t i, j, nadv = 0;

    if (before->off)
        goto out;
    hp_snapshot(&now, 1);
    if (now.off)
        goto out;
    adv = calloc(now.n + before->n + 1, sizeof *adv);   /* pieces */
    if (!adv) {
        free(now.r);
        goto out;
    }
    /*
    ** A new mapping may have been merged with an old neighbour: what is
    ** new of it is what no old mapping covered. Both lists are sorted and
    ** old mappings do not overlap, so each piece between them is new.
    */
    for (i = 0, j = 0; i < now.n; i++) {
        unsigned long a = now.r[i].start, b = now.r[i].end, stop;

        while (a < b) {
            while (j < before->n && before->r[j].end <= a)
                j++;
            if (j < before->n && before->r[j].start <= a) {   /* old */
                a = before->r[j].end;
                continue;
            }
            stop = j < before->n && before->r[j].start < b
                       ? before->r[j].start : b;
            if (advise(a, stop)) {
                adv[nadv].start = a;
                adv[nadv].end = stop;
                nadv++;
            }
            a = stop;
        }
    }
    free(now.r);
    if (nadv)
        got = huge_bytes(adv, nadv);
    free(adv);
out:
#endif
    free(before->r);
    before->r = NULL;
    before->n = 0;
    return got;
}
