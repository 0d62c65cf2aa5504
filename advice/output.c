/* Writing --fix results: in place (with FILE.orig), to -o, or as a unified diff. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "schedpredict/advice.h"
#include "schedpredict/analyzer.h"

int sp_adv_write_atomic(const char *path, const char *text, size_t len) {
  size_t n = strlen(path);
  char *tmp = malloc(n + 16);
  if (!tmp) return -1;
  snprintf(tmp, n + 16, "%s.tmpXXXXXX", path);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    free(tmp);
    return -1;
  }
  struct stat st;
  if (stat(path, &st) == 0) (void)fchmod(fd, st.st_mode & 07777);
  else {
    mode_t mask = umask(0); /* mkstemp's 0600 is stricter than a new file gets */
    umask(mask);
    (void)fchmod(fd, 0666 & ~mask);
  }
  FILE *f = fdopen(fd, "w");
  bool ok = f && fwrite(text, 1, len, f) == len;
  if (f) ok = fclose(f) == 0 && ok;
  else close(fd);
  int saved = errno;
  if (ok && rename(tmp, path) != 0) ok = false, saved = errno;
  if (!ok) unlink(tmp);
  free(tmp);
  errno = saved;
  return ok ? 0 : -1;
}

/* `diff -u` of old and new text, labelled a/FILE and b/FILE, on stdout. */
static int sp_adv_diff(const char *file, const char *old, const char *nw) {
  char a[] = "/tmp/schedpredict-a-XXXXXX", b[] = "/tmp/schedpredict-b-XXXXXX";
  int fa = mkstemp(a), fb = fa >= 0 ? mkstemp(b) : -1;
  int rc = SP_EXIT_INTERNAL;
  if (fa < 0 || fb < 0) goto out;
  size_t lo = strlen(old), ln = strlen(nw);
  if (write(fa, old, lo) != (ssize_t)lo || write(fb, nw, ln) != (ssize_t)ln) goto out;
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    char la[4096], lb[4096];
    snprintf(la, sizeof la, "a/%s", file);
    snprintf(lb, sizeof lb, "b/%s", file);
    execlp("diff", "diff", "-u", "--label", la, "--label", lb, a, b, (char *)NULL);
    _exit(127);
  }
  int status;
  if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
      WEXITSTATUS(status) <= 1)
    rc = SP_EXIT_OK;
  else
    fprintf(stderr, "schedpredict: error: could not run 'diff -u' (install diffutils)\n");
out:
  if (fa >= 0) close(fa), unlink(a);
  if (fb >= 0) close(fb), unlink(b);
  return rc;
}

int sp_adv_fix_files(const sp_adv_nest *a, int n, const sp_adv_fix_options *o) {
  const char **files;
  int nf = sp_adv_files(a, n, &files);
  if (nf < 0) return SP_EXIT_INTERNAL;
  if (o->output && nf > 1) {
    fprintf(stderr, "schedpredict: error: --fix with -o takes one input file (got %d)\n", nf);
    free(files);
    return SP_EXIT_USAGE;
  }
  int rc = SP_EXIT_OK;
  for (int i = 0; i < n; i++)
    if (a[i].rank && a[i].fix_error[0] && !a[i].no_gain && !o->quiet) {
      sp_srcloc l = a[i].nest->loc;
      fprintf(stderr, "%s:%u:%u: warning: --fix leaves this nest alone: %s\n", l.file, l.line,
              l.col, a[i].fix_error);
    }
  for (int f = 0; f < nf && rc == SP_EXIT_OK; f++) {
    sp_adv_edit *edits;
    int ne = sp_adv_file_edits(a, n, files[f], &edits, stderr);
    if (ne < 0) {
      rc = SP_EXIT_INTERNAL;
      break;
    }
    size_t oldlen;
    char *old = sp_adv_read_file(files[f], &oldlen);
    char *nw = old ? sp_adv_apply(files[f], edits, ne) : NULL;
    free(edits);
    if (!old || !nw) {
      fprintf(stderr, "%s: error: cannot read the file: %s\n", files[f], strerror(errno));
      free(old);
      free(nw);
      rc = SP_EXIT_INPUT;
      break;
    }
    bool same = strcmp(old, nw) == 0;
    if (o->mode == SP_ADV_FIX_DIFF) {
      if (!same) rc = sp_adv_diff(files[f], old, nw);
    } else if (o->output) {
      if (!o->force && access(o->output, F_OK) == 0) {
        fprintf(stderr, "schedpredict: error: %s exists; pass --force to replace it\n", o->output);
        rc = SP_EXIT_USAGE;
      } else if (sp_adv_write_atomic(o->output, nw, strlen(nw)) != 0) {
        fprintf(stderr, "schedpredict: error: cannot write %s: %s\n", o->output, strerror(errno));
        rc = SP_EXIT_INPUT;
      }
    } else if (!same) {
      if (o->backup) {
        char *bak = malloc(strlen(files[f]) + 6);
        if (!bak) rc = SP_EXIT_INTERNAL;
        else {
          sprintf(bak, "%s.orig", files[f]);
          if (!o->force && access(bak, F_OK) == 0) {
            fprintf(stderr, "schedpredict: error: %s exists; pass --force to replace it or "
                            "--no-backup to keep none\n", bak);
            rc = SP_EXIT_USAGE;
          } else if (sp_adv_write_atomic(bak, old, oldlen) != 0) {
            fprintf(stderr, "schedpredict: error: cannot write %s: %s\n", bak, strerror(errno));
            rc = SP_EXIT_INPUT;
          }
          free(bak);
        }
      }
      if (rc == SP_EXIT_OK && sp_adv_write_atomic(files[f], nw, strlen(nw)) != 0) {
        fprintf(stderr, "schedpredict: error: cannot write %s: %s\n", files[f], strerror(errno));
        rc = SP_EXIT_INPUT;
      }
      if (rc == SP_EXIT_OK && !o->quiet && o->backup)
        fprintf(stderr, "schedpredict: rewrote %s (the original is in %s.orig)\n", files[f],
                files[f]);
      else if (rc == SP_EXIT_OK && !o->quiet)
        fprintf(stderr, "schedpredict: rewrote %s\n", files[f]);
    }
    free(old);
    free(nw);
  }
  free(files);
  return rc;
}
