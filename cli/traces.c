/* traces.c -- the traces a command reads: a directory's *.db files (ranks,
 * diff DIR DIR), a trace opened with its decisions read, and file names
 * made safe for a message (cli.h). */
#define _GNU_SOURCE 1
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "../schema/text.h"

int dr_cli_is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int by_name(const void *p, const void *q) {
    return strcmp(*(char *const *)p, *(char *const *)q);
}

int dr_cli_list_traces(const char *dir, DrArena *a, DrStrVec *names, DrError *err) {
    DIR *d = opendir(dir);
    if (!d)
        return dr_error(err, DR_ERR_IO, "%s: cannot read the directory: %s", dir, strerror(errno));
    int rc = DR_OK;
    for (;;) {
        errno = 0;
        struct dirent *e = readdir(d);
        if (!e) {
            if (errno)
                rc = dr_error(err, DR_ERR_IO, "%s: cannot read the directory: %s", dir,
                              strerror(errno));
            break;
        }
        size_t n = strlen(e->d_name);
        struct stat st;
        /* Not following links: a link out of the directory is not its trace. */
        if (n <= 3 || strcmp(e->d_name + n - 3, ".db") != 0 ||
            fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
            continue;
        char *s = dr_arena_strdup(a, e->d_name);
        if (!s || dr_vec_push(names, s) != 0) {
            rc = dr_error(err, DR_ERR_NOMEM, "%s: out of memory listing the directory", dir);
            break;
        }
    }
    closedir(d);
    if (names->n > 1) qsort(names->v, (size_t)names->n, sizeof *names->v, by_name);
    return rc;
}

DrModel *dr_cli_load_model(const DrCommand *cmd, const char *path, DrTrace **t) {
    DrError err = {0};
    *t = dr_trace_open(path, &err);
    DrModel *m = *t ? dr_model_load(*t, &err) : NULL;
    if (!m) {
        dr_cli_fail(cmd, &err, DR_EX_DATAERR);
        dr_trace_free(*t);
        *t = NULL;
    }
    return m;
}

const char *dr_cli_safe(DrArena *a, const char *s) {
    char *safe = dr_safe(s, s ? strlen(s) : 0, 200, 0);
    char *copy = safe ? dr_arena_strdup(a, safe) : NULL;
    free(safe);
    return copy ? copy : "?";
}
