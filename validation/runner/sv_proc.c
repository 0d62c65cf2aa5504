/* schedvalidate: fork/exec with captured stdout and a time limit. */
#include "sv_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int sv_capture(char *const argv[], int timeout_s, int quiet, char **out, size_t *len) {
  *out = NULL;
  *len = 0;
  int fd[2];
  if (pipe(fd)) return -1;
  pid_t pid = fork();
  if (pid < 0) {
    close(fd[0]);
    close(fd[1]);
    return -1;
  }
  if (pid == 0) {
    setpgid(0, 0); /* so a timeout kills what it started too */
    dup2(fd[1], 1);
    close(fd[0]);
    close(fd[1]);
    if (quiet) {
      int dn = open("/dev/null", O_WRONLY);
      if (dn >= 0) dup2(dn, 2);
    }
    execvp(argv[0], argv);
    _exit(127);
  }
  close(fd[1]);
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  double deadline = timeout_s > 0 ? now_s() + timeout_s : 0;
  int timed_out = 0;
  for (;;) {
    int wait_ms = -1;
    if (deadline) {
      double left = deadline - now_s();
      if (left <= 0) {
        timed_out = 1;
        break;
      }
      wait_ms = (int)(left * 1000) + 1;
    }
    struct pollfd p = {fd[0], POLLIN, 0};
    int pr = poll(&p, 1, wait_ms);
    if (pr < 0 && errno == EINTR) continue;
    if (pr == 0) continue;
    if (pr < 0) break;
    if (buf && n + 4097 > cap) {
      char *nb = realloc(buf, cap *= 2);
      if (!nb) free(buf);
      buf = nb;
    }
    char sink[4096];
    ssize_t got = read(fd[0], buf ? buf + n : sink, 4096);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    if (buf) n += (size_t)got;
  }
  close(fd[0]);
  if (timed_out) kill(-pid, SIGKILL);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (buf) {
    buf[n] = 0;
    *out = buf;
    *len = n;
  }
  if (timed_out) return 124;
  if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
  return WEXITSTATUS(st) == 127 ? -1 : WEXITSTATUS(st);
}
