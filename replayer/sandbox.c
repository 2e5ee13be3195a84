/* sandbox.c -- bubblewrap mounts, seccomp filter and resource limits for
 * the replay child (sandbox.h).
 *
 * Why bubblewrap and libseccomp rather than unshare(2) by hand: bwrap is
 * the confinement Flatpak ships, reviewed and kept for exactly this (an
 * unprivileged process given a minimal root of read-only binds), and it
 * knows the corner cases of mount propagation, /proc and user namespaces
 * that a home-made jail gets wrong.  The filter is built with libseccomp
 * for the same reason (architecture checks, syscall numbers per ABI).
 *
 * The child loads the filter itself: bwrap loads a --seccomp program just
 * before it execs the command, so a filter denying execve would deny the
 * child too. */
#define _GNU_SOURCE 1
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "../schema/sign.h"

/* Limits of the confined tree.  Memory is address space: torch reserves a
 * few GB of it at import, so the cap is generous and only stops a runaway
 * (a value tree that asks for 100 GB). */
#define SBX_MEM_MIN (16ULL << 30)
#define SBX_CPU_S 3600
#define SBX_FSIZE (8ULL << 30)
#define SBX_NOFILE 4096

static int is_exec(const char *p) {
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISREG(sb.st_mode) && access(p, X_OK) == 0;
}

static char *find_bwrap(void) {
    const char *path = getenv("PATH");
    char buf[PATH_MAX];
    if (path) {
        const char *p = path;
        while (*p) {
            const char *e = strchr(p, ':');
            size_t n = e ? (size_t)(e - p) : strlen(p);
            if (n && n + 7 < sizeof buf && p[0] == '/') {
                snprintf(buf, sizeof buf, "%.*s/bwrap", (int)n, p);
                if (is_exec(buf)) return strdup(buf);
            }
            p += n;
            if (*p) p++;
        }
    }
    if (is_exec("/usr/bin/bwrap")) return strdup("/usr/bin/bwrap");
    return NULL;
}

char *dr_sandbox_probe(char *why, size_t whylen) {
    char *bwrap = find_bwrap();
    if (!bwrap) {
        snprintf(why, whylen,
                 "bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt-get "
                 "install bubblewrap)");
        return NULL;
    }
    int pfd[2];
    if (pipe(pfd) != 0) {
        snprintf(why, whylen, "cannot start %s: %s", bwrap, strerror(errno));
        free(bwrap);
        return NULL;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        close(pfd[0]);
        dup2(pfd[1], 2);
        int dn = open("/dev/null", O_RDWR);
        if (dn >= 0) {
            dup2(dn, 0);
            dup2(dn, 1);
        }
        char *argv[] = {bwrap,
                        "--unshare-all",
                        "--die-with-parent",
                        "--ro-bind",
                        "/",
                        "/",
                        "--proc",
                        "/proc",
                        "--dev",
                        "/dev",
                        "true",
                        NULL};
        execv(bwrap, argv);
        _exit(127);
    }
    close(pfd[1]);
    char err[300] = "";
    size_t got = 0;
    ssize_t n;
    char chunk[256];
    while ((n = read(pfd[0], chunk, sizeof chunk)) > 0 || (n < 0 && errno == EINTR))
        if (n > 0)
            for (ssize_t i = 0; i < n && got + 1 < sizeof err; i++)
                err[got++] = (chunk[i] >= 0x20 && chunk[i] < 0x7f) ? chunk[i] : ' ';
    err[got] = 0;
    close(pfd[0]);
    int st = 0;
    while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (pid < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        while (got && err[got - 1] == ' ') err[--got] = 0;
        snprintf(why, whylen, "bubblewrap cannot create its namespaces here (%s)",
                 *err ? err : "it failed");
        free(bwrap);
        return NULL;
    }
    return bwrap;
}

static int push2(DrArena *a, DrStrVec *v, const char *x, const char *y) {
    char *cx = dr_arena_strdup(a, x), *cy = y ? dr_arena_strdup(a, y) : NULL;
    if (!cx || (y && !cy) || dr_vec_push(v, cx) != 0) return -1;
    return y ? dr_vec_push(v, cy) : 0;
}

static int push3(DrArena *a, DrStrVec *v, const char *x, const char *y, const char *z) {
    return push2(a, v, x, y) == 0 && push2(a, v, z, NULL) == 0 ? 0 : -1;
}

/* Binds dir read-only at its own path, unless /usr holds it already. */
static int bind_ro(DrArena *a, DrStrVec *v, const char *dir) {
    if (!dir || !*dir || strncmp(dir, "/usr/", 5) == 0) return 0;
    return push3(a, v, "--ro-bind-try", dir, dir);
}

/* Whether folder dir is path or a folder above it. */
static int holds(const char *dir, const char *path) {
    size_t n = strlen(dir);
    if (n == 1 && dir[0] == '/') return 1;
    return strncmp(dir, path, n) == 0 && (path[n] == 0 || path[n] == '/');
}

const char *dr_sandbox_pythonpath(DrArena *a) {
    const char *pp = getenv("PYTHONPATH"), *home = getenv("HOME");
    /* Never a folder that holds $HOME or the signing key's (the sandbox
     * has no $HOME): PYTHONPATH=/home/u would show a trace's code the
     * user's files, which it could copy into the trace it writes. */
    char home_real[PATH_MAX] = "", key[PATH_MAX] = "", key_real[PATH_MAX] = "";
    if (home && home[0] == '/' && !realpath(home, home_real))
        snprintf(home_real, sizeof home_real, "%s", home);
    if (dr_sign_key_dir(key, sizeof key) == 0 && !realpath(key, key_real))
        snprintf(key_real, sizeof key_real, "%s", key);
    DrBuf out = {0};
    while (pp && *pp) {
        size_t n = strcspn(pp, ":");
        char entry[PATH_MAX], real[PATH_MAX];
        struct stat st;
        if (n > 0 && n < sizeof entry && pp[0] == '/') {
            memcpy(entry, pp, n);
            entry[n] = 0;
            if (realpath(entry, real) && stat(real, &st) == 0 && S_ISDIR(st.st_mode) &&
                !strchr(real, ':') && !(home_real[0] && holds(real, home_real)) &&
                !(key_real[0] && holds(real, key_real)) && !holds(real, "/"))
                dr_buf_printf(&out, "%s%s", out.len ? ":" : "", real);
        }
        pp += n + (pp[n] == ':');
    }
    const char *kept = out.len && !out.failed ? dr_arena_strdup(a, out.s) : NULL;
    dr_buf_free(&out);
    return kept;
}

/* The real directory two levels above path's real file (bin/python ->
 * the venv or prefix), or "" */
static void prefix_of(const char *path, char *out, size_t n) {
    char real[PATH_MAX];
    out[0] = 0;
    if (!realpath(path, real)) return;
    for (int up = 0; up < 2; up++) {
        char *s = strrchr(real, '/');
        if (!s) return;
        *s = 0;
    }
    if (real[0] == '/' && real[1]) snprintf(out, n, "%s", real);
}

int dr_sandbox_argv(DrArena *a, const DrSandbox *sb, char *const *args, DrStrVec *argv) {
    if (push2(a, argv, sb->bwrap, NULL) != 0) return -1;
    static const char *const flags[] = {"--unshare-all", "--die-with-parent", "--new-session",
                                        "--cap-drop", "ALL"};
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++)
        if (push2(a, argv, flags[i], NULL) != 0) return -1;
    if (push3(a, argv, "--ro-bind", "/usr", "/usr") != 0) return -1;
    /* The top-level links of a merged /usr (/lib -> usr/lib), or the
     * directories themselves where /usr is not merged. */
    static const char *const top[] = {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"};
    for (size_t i = 0; i < sizeof top / sizeof *top; i++) {
        struct stat st;
        if (lstat(top[i], &st) != 0) continue;
        if (S_ISLNK(st.st_mode)) {
            char target[PATH_MAX];
            ssize_t n = readlink(top[i], target, sizeof target - 1);
            if (n <= 0) continue;
            target[n] = 0;
            if (push3(a, argv, "--symlink", target, top[i]) != 0) return -1;
        } else if (S_ISDIR(st.st_mode) && bind_ro(a, argv, top[i]) != 0) {
            return -1;
        }
    }
    /* What the loader and the C library read; nothing else of /etc. */
    static const char *const etc[] = {"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
                                      "/etc/localtime"};
    for (size_t i = 0; i < sizeof etc / sizeof *etc; i++)
        if (bind_ro(a, argv, etc[i]) != 0) return -1;
    if (push2(a, argv, "--proc", "/proc") != 0 || push2(a, argv, "--dev", "/dev") != 0 ||
        push2(a, argv, "--tmpfs", "/tmp") != 0)
        return -1;
    /* The processor topology torch reads at import. */
    if (push3(a, argv, "--ro-bind-try", "/sys/devices/system/cpu", "/sys/devices/system/cpu") != 0)
        return -1;
    char dir[PATH_MAX];
    if (sb->python) {
        /* The venv (bin/python -> venv), and the interpreter it points at. */
        char venv[PATH_MAX];
        snprintf(venv, sizeof venv, "%s", sb->python);
        for (int up = 0; up < 2; up++) {
            char *s = strrchr(venv, '/');
            if (s && s != venv) *s = 0;
        }
        char real[PATH_MAX];
        if (realpath(venv, real) && bind_ro(a, argv, real) != 0) return -1;
        if (strcmp(real, venv) != 0 && bind_ro(a, argv, venv) != 0) return -1;
        prefix_of(sb->python, dir, sizeof dir);
        if (bind_ro(a, argv, dir) != 0) return -1;
    }
    char self[PATH_MAX];
    if (!realpath(sb->self, self)) snprintf(self, sizeof self, "%s", sb->self);
    if (push3(a, argv, "--ro-bind", self, self) != 0) return -1;
    if (push3(a, argv, "--ro-bind", sb->in_dir, sb->in_dir) != 0 ||
        push3(a, argv, "--bind", sb->out_dir, sb->out_dir) != 0)
        return -1;
    if (sb->run_dir &&
        push3(a, argv, sb->run_dir_rw ? "--bind" : "--ro-bind", sb->run_dir, sb->run_dir) != 0)
        return -1;
    if (sb->also_ro && push3(a, argv, "--ro-bind-try", sb->also_ro, sb->also_ro) != 0) return -1;
    for (const char *pp = sb->pythonpath; pp && *pp;) {
        size_t n = strcspn(pp, ":");
        char entry[PATH_MAX];
        if (n < sizeof entry) {
            memcpy(entry, pp, n);
            entry[n] = 0;
            if (bind_ro(a, argv, entry) != 0) return -1;
        }
        pp += n + (pp[n] == ':');
    }
    const char *cwd = sb->cwd ? sb->cwd : sb->run_dir ? sb->run_dir : "/tmp";
    if (push2(a, argv, "--chdir", cwd) != 0) return -1;
    if (push2(a, argv, "--", NULL) != 0 || push2(a, argv, self, NULL) != 0) return -1;
    for (int i = 1; args[i]; i++)
        if (push2(a, argv, args[i], NULL) != 0) return -1;
    return 0;
}

static void set_limit(int res, unsigned long long v) {
    struct rlimit rl;
    if (getrlimit(res, &rl) != 0) return;
    if (rl.rlim_max != RLIM_INFINITY && v > rl.rlim_max) v = rl.rlim_max;
    rl.rlim_cur = (rlim_t)v;
    if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max > (rlim_t)v) rl.rlim_max = (rlim_t)v;
    setrlimit(res, &rl);
}

void dr_sandbox_limits(void) {
    unsigned long long mem = SBX_MEM_MIN;
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    if (pages > 0 && psz > 0 && (unsigned long long)pages * (unsigned long long)psz > mem)
        mem = (unsigned long long)pages * (unsigned long long)psz;
    /* AddressSanitizer reserves terabytes of shadow memory: no address
     * space cap under it (the other limits hold). */
    if (!getenv("ASAN_OPTIONS")) set_limit(RLIMIT_AS, mem);
    set_limit(RLIMIT_CPU, SBX_CPU_S);
    set_limit(RLIMIT_FSIZE, SBX_FSIZE);
    set_limit(RLIMIT_NOFILE, SBX_NOFILE);
    set_limit(RLIMIT_CORE, 0);
}

static const struct {
    const char *name, *desc;
    int exec;
} modes[] = {
    [DR_SBX_NONE] = {"none", "none", 1},
    [DR_SBX_REPLAY] = {"replay", DR_SANDBOX_DESC, 0},
    [DR_SBX_INDUCTOR] = {"inductor",
                         "bubblewrap+seccomp (no network, read-only, exec for "
                         "inductor)",
                         1},
    [DR_SBX_RERUN] = {"rerun",
                      "bubblewrap+seccomp (no network, read-only but the run's "
                      "folder)",
                      1},
};

const char *dr_sandbox_mode_name(DrSandboxMode m) { return modes[m].name; }
const char *dr_sandbox_mode_desc(DrSandboxMode m) { return modes[m].desc; }

DrSandboxMode dr_sandbox_mode_of(const char *name) {
    for (size_t i = 0; i < sizeof modes / sizeof *modes; i++)
        if (name && strcmp(name, modes[i].name) == 0) return (DrSandboxMode)i;
    return DR_SBX_NONE;
}

int dr_sandbox_lockdown(DrSandboxMode mode, char *why, size_t whylen) {
    int allow_exec = modes[mode].exec;
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx) {
        snprintf(why, whylen, "cannot build the seccomp filter");
        return -1;
    }
    int rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
    if (rc == 0) rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 1);
    static const char *const denied[] = {"execve",
                                         "execveat",
                                         "ptrace",
                                         "process_vm_readv",
                                         "process_vm_writev",
                                         "mount",
                                         "umount2",
                                         "pivot_root",
                                         "chroot",
                                         "unshare",
                                         "setns",
                                         "keyctl",
                                         "add_key",
                                         "request_key",
                                         "bpf",
                                         "perf_event_open",
                                         "userfaultfd",
                                         "kexec_load",
                                         "kexec_file_load",
                                         "init_module",
                                         "finit_module",
                                         "delete_module",
                                         "open_by_handle_at",
                                         "name_to_handle_at",
                                         "fsopen",
                                         "fsmount",
                                         "move_mount",
                                         "open_tree",
                                         "quotactl",
                                         "swapon",
                                         "swapoff",
                                         "reboot",
                                         "acct"};
    for (size_t i = 0; rc == 0 && i < sizeof denied / sizeof *denied; i++) {
        int nr = seccomp_syscall_resolve_name(denied[i]);
        if (nr == __NR_SCMP_ERROR) continue; /* not on this architecture */
        if (allow_exec && strncmp(denied[i], "execve", 6) == 0) continue;
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
    }
    /* Typing into the terminal's input queue (bwrap's --new-session already
     * detaches the terminal; this holds under --no-sandbox's caller too). */
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
                              SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI));
    if (rc == 0) rc = seccomp_load(ctx);
    seccomp_release(ctx);
    if (rc != 0) {
        snprintf(why, whylen, "cannot load the seccomp filter: %s", strerror(-rc));
        return -1;
    }
    return 0;
}
