#define _GNU_SOURCE 1
/* test_sandbox.c -- `dynrec replay` of a trace whose stored definitions
 * are hostile, confined by bubblewrap and seccomp (replayer/sandbox.c).
 *
 * tests/scripts/sandbox/hostile.py is recorded for real; its class body
 * turns hostile whenever it runs outside the recording.  The replay runs
 * it (the sources are gone, no --trust: only the sandbox makes that safe)
 * and every escape must fail: os.system and subprocess (no exec), a write
 * outside the output trace, a connection to a port this test listens on
 * (no network), a read of a file outside the sandbox's view.  Unconfined
 * (--no-sandbox) the same trace is refused (77) and nothing runs.  The
 * recorded environment reaches the replay only through its allow-list.
 * Then the signature: a trace this user recorded reruns without --trust;
 * one changed since, unsigned, or signed under another key needs it. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "e2e_util.h"
#include "sign.h"

TestSuite(sandbox, .init = e2e_setup, .fini = e2e_teardown, .timeout = 240);

static E2eProc *sh(const char *cmd) {
    return e2e_run_in((const char *[]){"/bin/sh", "-c", cmd, NULL}, NULL, E2E_TORCH_TIMEOUT_MS);
}

/* Records tests/scripts/sandbox/hostile.py into t.db and removes the
 * script: its definitions exist only in the trace. */
static void record_hostile(void) {
    e2e_copy_script("sandbox/hostile.py");
    E2eProc *p = sh(e2e_fmt("cd '%s/sandbox' && '%s' run -q -o ../t.db hostile.py && "
                            "rm hostile.py",
                            e2e_path("."), e2e_bin));
    e2e_assert_exit(p, 0, e2e_fmt("recording hostile.py: %s", p->err.data));
}

static int exists(const char *name) {
    struct stat sb;
    return stat(e2e_path(name), &sb) == 0;
}

Test(sandbox, hostile_definitions_are_confined) {
    record_hostile();
    /* A file under $HOME, which the sandbox does not show. */
    mkdir(e2e_path("home"), 0700);
    e2e_write_file(e2e_path("home/.secret"), "TOPSECRET-7f3a", 14);
    char *home = getenv("HOME") ? e2e_fmt("%s", getenv("HOME")) : NULL;
    setenv("HOME", e2e_path("home"), 1);
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    cr_assert_geq(ls, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof sa;
    cr_assert_eq(bind(ls, (struct sockaddr *)&sa, sizeof sa), 0);
    cr_assert_eq(listen(ls, 4), 0);
    cr_assert_eq(getsockname(ls, (struct sockaddr *)&sa, &sl), 0);
    setenv("DYNREC_TEST_MARK", e2e_path("mark"), 1);
    setenv("DYNREC_TEST_SECRET", e2e_path("home/.secret"), 1);
    setenv("DYNREC_TEST_PORT", e2e_fmt("%d", ntohs(sa.sin_port)), 1);
    E2eProc *r = e2e_run_in(
        (const char *[]){e2e_bin, "replay", "-o", e2e_path("r.db"), e2e_path("t.db"), NULL}, NULL,
        E2E_TORCH_TIMEOUT_MS);
    if (home) setenv("HOME", home, 1);
    unsetenv("DYNREC_TEST_MARK");
    unsetenv("DYNREC_TEST_SECRET");
    unsetenv("DYNREC_TEST_PORT");
    /* The payload ran (a definition), and every attempt failed. */
    cr_assert_not_null(strstr(r->err.data, "payload: "), "the payload did not run:\n%s%s",
                       r->out.data, r->err.data);
    cr_assert_null(strstr(r->err.data, ":ran"), "an escape worked:\n%s", r->err.data);
    cr_assert_null(strstr(r->err.data, "system:0"), "os.system ran:\n%s", r->err.data);
    cr_assert_null(strstr(r->out.data, "TOPSECRET"), "the secret was read:\n%s", r->out.data);
    cr_assert_null(strstr(r->err.data, "TOPSECRET"), "the secret was read:\n%s", r->err.data);
    static const char *const marks[] = {"mark.system", "mark.sub", "mark.write"};
    for (size_t i = 0; i < sizeof marks / sizeof *marks; i++)
        cr_assert(!exists(marks[i]), "%s was created:\n%s", marks[i], r->err.data);
    int c = accept(ls, NULL, NULL);
    cr_assert(c < 0 && (errno == EAGAIN || errno == EWOULDBLOCK),
              "the replay connected to 127.0.0.1:%d", ntohs(sa.sin_port));
    close(ls);
    /* And the replay itself still ends with a clean report. */
    cr_assert_eq(r->status, 0, "replay exit %s:\n%s%s", e2e_status_text(r->status), r->out.data,
                 r->err.data);
    cr_assert_not_null(strstr(r->out.data, "  sandbox: bubblewrap+seccomp (no network, "
                                           "read-only, no exec)\n"),
                       "%s", r->out.data);
    cr_assert_not_null(strstr(r->out.data, "\nidentical: "), "%s", r->out.data);
    DrTrace *b = e2e_open(e2e_path("r.db"));
    cr_assert_str_eq(e2e_meta(b, "sandbox"), "bubblewrap+seccomp (no network, read-only, no exec)");
    cr_assert_str_eq(e2e_meta(b, "replay_of"), e2e_path("t.db"));
}

Test(sandbox, unconfined_needs_trust) {
    record_hostile();
    setenv("DYNREC_TEST_MARK", e2e_path("mark"), 1);
    E2eProc *r = e2e_run((const char *[]){e2e_bin, "replay", "--no-sandbox", "-o", e2e_path("r.db"),
                                          e2e_path("t.db"), NULL});
    unsetenv("DYNREC_TEST_MARK");
    e2e_assert_exit(r, 77, "replay --no-sandbox of a trace whose sources are gone");
    cr_assert_not_null(strstr(r->err.data, "--no-sandbox"), "%s", r->err.data);
    cr_assert_not_null(strstr(r->err.data, "add --trust"), "%s", r->err.data);
    cr_assert_null(strstr(r->err.data, "payload:"), "%s", r->err.data);
    cr_assert(!exists("mark.system") && !exists("mark.write") && !exists("r.db"));
}

/* A recorded TORCH_LOGS_OUT would append to any file, a recorded
 * TORCHINDUCTOR_CACHE_DIR make directories anywhere: neither reaches the
 * replay (unconfined here, so the sandbox's private /tmp cannot be what
 * hides them), while a plain TORCH_LOGS does. */
Test(sandbox, recorded_environment_allow_list) {
    e2e_copy_example("quickstart.py");
    E2eProc *p = sh(e2e_fmt("cd '%s' && TORCH_LOGS=recompiles TORCH_LOGS_OUT='%s' "
                            "TORCHINDUCTOR_CACHE_DIR='%s' '%s' run -q -o t.db quickstart.py",
                            e2e_path("."), e2e_path("logs.txt"), e2e_path("cache"), e2e_bin));
    e2e_assert_exit(p, 0, e2e_fmt("recording quickstart.py: %s", p->err.data));
    DrTrace *t = e2e_open(e2e_path("t.db"));
    cr_assert_str_eq(e2e_meta(t, "env.TORCH_LOGS_OUT"), e2e_path("logs.txt"));
    e2e_close(t);
    sh(e2e_fmt("rm -rf '%s' '%s'", e2e_path("logs.txt"), e2e_path("cache")));
    E2eProc *r = e2e_run((const char *[]){e2e_bin, "replay", "--no-sandbox", "--json", "-o",
                                          e2e_path("r.db"), e2e_path("t.db"), NULL});
    cr_assert_eq(r->status, 0, "replay exit %s:\n%s%s", e2e_status_text(r->status), r->out.data,
                 r->err.data);
    cr_assert(!exists("logs.txt"), "the replay wrote the recorded TORCH_LOGS_OUT");
    cr_assert(!exists("cache"), "the replay made the recorded TORCHINDUCTOR_CACHE_DIR");
    /* What was left out is in --json; an identical replay says nothing of it. */
    cr_assert_not_null(strstr(r->out.data, "\"env_left_out\": \"TORCHINDUCTOR_CACHE_DIR, "
                                           "TORCH_LOGS_OUT\""),
                       "%s", r->out.data);
    cr_assert_null(strstr(r->err.data, "left out"), "%s", r->err.data);
    /* Beside a difference (here one made with --set), the text names them. */
    E2eProc *d = e2e_run((const char *[]){e2e_bin, "replay", "--no-sandbox", "--set",
                                          "automatic_dynamic_shapes=False", "-o", e2e_path("d.db"),
                                          e2e_path("t.db"), NULL});
    cr_assert_eq(d->status, 1 << 8, "replay exit %s:\n%s%s", e2e_status_text(d->status),
                 d->out.data, d->err.data);
    cr_assert_not_null(strstr(d->out.data, "  note: recorded environment left out (it could name "
                                           "a path or make Python import): "
                                           "TORCHINDUCTOR_CACHE_DIR, TORCH_LOGS_OUT\n"),
                       "%s", d->out.data);
    DrTrace *b = e2e_open(e2e_path("r.db"));
    cr_assert_str_eq(e2e_meta(b, "env.TORCH_LOGS"), "recompiles");
    cr_assert_null(e2e_meta(b, "env.TORCH_LOGS_OUT"));
    cr_assert_str_eq(e2e_meta(b, "sandbox"), "none");
}

/* ---- signed traces: "recorded here by you" (schema/sign.c) ---------------- */

TestSuite(sign, .init = e2e_setup, .fini = e2e_teardown, .timeout = 240);

static char *hexs(const uint8_t *b, size_t n) {
    char *s = e2e_own(malloc(2 * n + 1));
    for (size_t i = 0; i < n; i++) sprintf(s + 2 * i, "%02x", b[i]);
    return s;
}

Test(sign, sha256_and_hmac_vectors) {
    static const struct {
        const char *msg, *want;
    } sha[] = {
        {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
    };
    for (size_t i = 0; i < sizeof sha / sizeof *sha; i++) {
        DrSha256 s;
        uint8_t out[32];
        dr_sha256_init(&s);
        /* Fed a byte at a time: the block boundaries are crossed too. */
        for (const char *p = sha[i].msg; *p; p++) dr_sha256_add(&s, p, 1);
        dr_sha256_done(&s, out);
        cr_assert_str_eq(hexs(out, 32), sha[i].want, "sha256(%s)", sha[i].msg);
    }
    /* A million 'a's (FIPS 180-2 appendix B.3). */
    DrSha256 s;
    uint8_t out[32];
    char a[1000];
    memset(a, 'a', sizeof a);
    dr_sha256_init(&s);
    for (int i = 0; i < 1000; i++) dr_sha256_add(&s, a, sizeof a);
    dr_sha256_done(&s, out);
    cr_assert_str_eq(hexs(out, 32),
                     "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    /* RFC 4231 test cases 2 and 6 (a key longer than the block). */
    dr_hmac_sha256((const uint8_t *)"Jefe", 4, (const uint8_t *)"what do ya want for nothing?", 28,
                   out);
    cr_assert_str_eq(hexs(out, 32),
                     "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    uint8_t key[131];
    memset(key, 0xaa, sizeof key);
    const char *m = "Test Using Larger Than Block-Size Key - Hash Key First";
    dr_hmac_sha256(key, sizeof key, (const uint8_t *)m, strlen(m), out);
    cr_assert_str_eq(hexs(out, 32),
                     "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

static void edit(const char *db, const char *sql) {
    sqlite3 *h = NULL;
    cr_assert_eq(sqlite3_open(e2e_path(db), &h), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK, "%s", sqlite3_errmsg(h));
    cr_assert_eq(sqlite3_close(h), SQLITE_OK);
}

static void copy(const char *from, const char *to) {
    size_t len = 0;
    char *data = e2e_slurp(e2e_path(from), &len);
    cr_assert_not_null(data);
    e2e_write_file(e2e_path(to), data, len);
}

Test(sign, own_traces_rerun_others_need_trust) {
    e2e_copy_example("quickstart.py");
    /* This user's key, kept in the test's directory. */
    setenv("XDG_DATA_HOME", e2e_path("me"), 1);
    E2eProc *p =
        sh(e2e_fmt("cd '%s' && '%s' run -q -o t.db quickstart.py", e2e_path("."), e2e_bin));
    e2e_assert_exit(p, 0, "recording quickstart.py");
    struct stat sb;
    cr_assert_eq(stat(e2e_path("me/dynrec/key"), &sb), 0, "no key was made");
    cr_assert_eq(sb.st_mode & 0777, 0600);
    DrTrace *t = e2e_open(e2e_path("t.db"));
    cr_assert_eq(strncmp(e2e_meta(t, "signature"), "v1:", 3), 0);
    e2e_close(t);
    E2eProc *s = e2e_run((const char *[]){e2e_bin, "show", e2e_path("t.db"), NULL});
    cr_assert_not_null(strstr(s->out.data, "\nsignature    recorded here by you\n"), "%s",
                       s->out.data);
    E2eProc *r = e2e_run_in(
        (const char *[]){e2e_bin, "rerun", "-o", e2e_path("r.db"), e2e_path("t.db"), NULL}, NULL,
        E2E_TORCH_TIMEOUT_MS);
    cr_assert_eq(r->status, 0, "own trace: %s%s", r->out.data, r->err.data);

    /* The recorded command line given one argument more: foreign. */
    copy("t.db", "argv.db");
    edit("argv.db", "UPDATE meta SET value = '[\"-\"]' WHERE key = 'argv'");
    E2eProc *f = e2e_run(
        (const char *[]){e2e_bin, "rerun", "-o", e2e_path("f.db"), e2e_path("argv.db"), NULL});
    e2e_assert_exit(f, 77, "rerun of an edited trace");
    cr_assert_not_null(strstr(f->err.data, "was not recorded by you here"), "%s", f->err.data);
    cr_assert_not_null(strstr(f->err.data, "add --trust"), "%s", f->err.data);
    cr_assert(!exists("f.db"), "something ran");
    s = e2e_run((const char *[]){e2e_bin, "show", e2e_path("argv.db"), NULL});
    cr_assert_not_null(strstr(s->out.data, "\nsignature    foreign"), "%s", s->out.data);
    /* A stored source changed, or the signature dropped: foreign too. */
    copy("t.db", "src.db");
    edit("src.db", "UPDATE files SET size = size + 1");
    copy("t.db", "unsigned.db");
    edit("unsigned.db", "DELETE FROM meta WHERE key = 'signature'");
    const char *const others[] = {"src.db", "unsigned.db"};
    for (size_t i = 0; i < 2; i++) {
        E2eProc *o = e2e_run(
            (const char *[]){e2e_bin, "rerun", "-o", e2e_path("f.db"), e2e_path(others[i]), NULL});
        e2e_assert_exit(o, 77, others[i]);
    }

    /* The same trace under another user's key: foreign. */
    setenv("XDG_DATA_HOME", e2e_path("other"), 1);
    E2eProc *k =
        sh(e2e_fmt("cd '%s' && '%s' run -q -o k.db quickstart.py", e2e_path("."), e2e_bin));
    e2e_assert_exit(k, 0, "recording under the other key");
    E2eProc *o =
        e2e_run((const char *[]){e2e_bin, "rerun", "-o", e2e_path("f.db"), e2e_path("t.db"), NULL});
    e2e_assert_exit(o, 77, "rerun under another user's key");
    cr_assert_not_null(strstr(o->err.data, "not signed by your key"), "%s", o->err.data);
    /* --trust runs it anyway. */
    E2eProc *y = e2e_run_in((const char *[]){e2e_bin, "rerun", "--trust", "-o", e2e_path("y.db"),
                                             e2e_path("t.db"), NULL},
                            NULL, E2E_TORCH_TIMEOUT_MS);
    unsetenv("XDG_DATA_HOME");
    cr_assert_eq(y->status, 0, "--trust: %s%s", y->out.data, y->err.data);
}

/* A stranger's trace re-run with --trust runs confined: the program's own
 * folder read-only, no network, nothing outside it visible. */
Test(sandbox, foreign_rerun_is_confined) {
    record_hostile();
    /* The script is needed on disk for a plain re-run. */
    e2e_copy_script("sandbox/hostile.py");
    mkdir(e2e_path("outside"), 0700);
    e2e_write_file(e2e_path("outside/secret"), "TOPSECRET-7f3a", 14);
    setenv("XDG_DATA_HOME", e2e_path("other-user"), 1);
    setenv("DYNREC_TEST_MARK", e2e_path("sandbox/mark"), 1);
    setenv("DYNREC_TEST_SECRET", e2e_path("outside/secret"), 1);
    E2eProc *no =
        e2e_run((const char *[]){e2e_bin, "rerun", "-o", e2e_path("n.db"), e2e_path("t.db"), NULL});
    E2eProc *r = e2e_run_in((const char *[]){e2e_bin, "rerun", "--trust", "--ignore", "output",
                                             "-o", e2e_path("r.db"), e2e_path("t.db"), NULL},
                            NULL, E2E_TORCH_TIMEOUT_MS);
    unsetenv("XDG_DATA_HOME");
    unsetenv("DYNREC_TEST_MARK");
    unsetenv("DYNREC_TEST_SECRET");
    e2e_assert_exit(no, 77, "rerun of another user's trace without --trust");
    cr_assert_null(strstr(no->err.data, "payload:"), "%s", no->err.data);
    cr_assert_not_null(strstr(r->err.data, "payload: "), "the program did not run:\n%s%s",
                       r->out.data, r->err.data);
    cr_assert_null(strstr(r->err.data, "TOPSECRET"), "the secret was read:\n%s", r->err.data);
    cr_assert_null(strstr(r->err.data, "connect:ran"), "%s", r->err.data);
    cr_assert_null(strstr(r->err.data, "write:ran"), "%s", r->err.data);
    static const char *const marks[] = {"sandbox/mark.system", "sandbox/mark.sub",
                                        "sandbox/mark.write"};
    for (size_t i = 0; i < sizeof marks / sizeof *marks; i++)
        cr_assert(!exists(marks[i]), "%s was created:\n%s", marks[i], r->err.data);
    cr_assert_eq(r->status, 0, "rerun exit %s:\n%s%s", e2e_status_text(r->status), r->out.data,
                 r->err.data);
    cr_assert_not_null(strstr(r->out.data, "  sandbox: bubblewrap+seccomp (no network, "
                                           "read-only but the run's folder)\n"),
                       "%s", r->out.data);
}

/* --from-trace runs the stored copy even when the script was recorded by
 * its absolute path (which names the file on disk). */
Test(sandbox, from_trace_runs_the_stored_copy_of_an_absolute_script) {
    const char *v1 = "print('stored copy')\n", *v2 = "print('file on disk')\n";
    mkdir(e2e_path("app"), 0755);
    e2e_write_file(e2e_path("app/prog.py"), v1, strlen(v1));
    E2eProc *p = e2e_run((const char *[]){e2e_bin, "run", "-q", "-o", e2e_path("t.db"),
                                          e2e_path("app/prog.py"), NULL});
    e2e_assert_exit(p, 0, "recording prog.py");
    e2e_write_file(e2e_path("app/prog.py"), v2, strlen(v2));
    E2eProc *r = e2e_run((const char *[]){e2e_bin, "rerun", "--from-trace", "--trust", "-o",
                                          e2e_path("r.db"), e2e_path("t.db"), NULL});
    cr_assert_eq(r->status, 0, "rerun exit %s:\n%s%s", e2e_status_text(r->status), r->out.data,
                 r->err.data);
    cr_assert_not_null(strstr(r->out.data, "stored copy\n"), "%s", r->out.data);
    cr_assert_null(strstr(r->out.data, "file on disk"), "%s", r->out.data);
}
