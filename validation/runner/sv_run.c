/* schedvalidate: child processes and their supervision (see sv_run.h).
   Child -> parent protocol, one JSON object per line on a pipe:
     {"type":"device","device":{...}}           once, after the device opened
     {"type":"begin","item":I} / {"type":"begin","ref":K}   work on item I / kernel K's reference
     {"type":"result","item":I,"record":{...}}
     {"type":"refbad","kernel":K,"message":"..."}
     {"type":"fatal","code":C,"message":"..."}  then the child exits with C
     {"type":"setup"|"compiled","kernel":K}     progress while a kernel's arrays and CUBINs are made
   The parent allows --timeout-s from each line to the next. */
#include "sv_run.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sv_output.h"

/* ---------------------------------------------------------------- child */

static void emit(FILE *out, json_t *obj) {
  char *s = json_dumps(obj, JSON_COMPACT);
  if (s) {
    fputs(s, out);
    fputc('\n', out);
    fflush(out);
    free(s);
  }
  json_decref(obj);
}

static int child_fatal(FILE *out, int code, const char *message) {
  emit(out, json_pack("{s:s, s:i, s:o}", "type", "fatal", "code", code, "message", sv_json_text(message)));
  return code;
}

static json_t *too_large_record(const sv_candidate *c, const char *why) {
  return json_pack("{s:I, s:s, s:o}", "id", (json_int_t)c->id, "status", "too_large", "message", sv_json_text(why));
}

/* Compiles the candidates of item pos's kernel that this child will run, and the reference. */
static void precompile(sv_gpu *g, const sv_job *job, size_t pos, bool with_reference) {
  size_t k = job->items[pos].kernel, ref = job->plan->kernels[k].reference, n = 0;
  size_t *cands = malloc((job->n_items - pos + 1) * sizeof *cands);
  if (!cands) return;
  if (with_reference) cands[n++] = ref;
  for (size_t i = pos; i < job->n_items && job->items[i].kernel == k; i++)
    if (job->items[i].cand != ref) cands[n++] = job->items[i].cand;
  sv_gpu_precompile(g, cands, n);
  free(cands);
}

static int child_main(const sv_job *job, const sv_results *res, size_t start, FILE *out) {
  char err[8192];
  /* The parent decides when to stop (and then kills this process). */
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  sv_gpu *g;
  json_t *dev;
  int rc = sv_gpu_open(&g, &job->gpu, &dev, err, sizeof err);
  if (rc) return child_fatal(out, rc, err);
  emit(out, json_pack("{s:s, s:o}", "type", "device", "device", dev));
  size_t cur = (size_t)-1;
  bool too_large = false;
  char too_large_why[1024] = "";
  for (size_t pos = start; pos < job->n_items; pos++) {
    const sv_item *it = &job->items[pos];
    const sv_kernel *k = &job->plan->kernels[it->kernel];
    if (it->kernel != cur) {
      cur = it->kernel;
      emit(out, json_pack("{s:s, s:I}", "type", "setup", "kernel", (json_int_t)cur));
      int kr = sv_gpu_kernel_begin(g, k, err, sizeof err);
      too_large = kr == 1;
      if (too_large) snprintf(too_large_why, sizeof too_large_why, "%.1000s", err);
      else if (kr) {
        fprintf(stderr, "schedvalidate: kernel %s: %s\n", k->id, err);
        return kr;
      } else {
        precompile(g, job, pos, !res->ref_bad[cur]);
        emit(out, json_pack("{s:s, s:I}", "type", "compiled", "kernel", (json_int_t)cur));
        if (res->ref_bad[cur]) {
          sv_gpu_reference_failed(g, res->ref_msg[cur] ? res->ref_msg[cur] : "it failed");
        } else if (it->cand != k->reference) {
          emit(out, json_pack("{s:s, s:I}", "type", "begin", "ref", (json_int_t)cur));
          int rr = sv_gpu_reference(g, k->reference, err, sizeof err);
          if (rr) {
            sv_gpu_reference_failed(g, err);
            emit(out, json_pack("{s:s, s:I, s:o}", "type", "refbad", "kernel", (json_int_t)cur, "message", sv_json_text(err)));
            if (rr > 1) {
              sv_gpu_close(g);
              return rr;
            }
          }
        }
      }
    }
    emit(out, json_pack("{s:s, s:I}", "type", "begin", "item", (json_int_t)pos));
    int code = SV_EXIT_OK;
    json_t *rec = too_large ? too_large_record(&k->cands[it->cand], too_large_why)
                            : sv_gpu_candidate(g, it->cand, &code);
    const char *st = json_string_value(json_object_get(rec, "status"));
    if (it->cand == k->reference && st && strcmp(st, "ok")) {
      const char *m = json_string_value(json_object_get(rec, "message"));
      char why[2048];
      snprintf(why, sizeof why, "%s%s%.2000s", st, m ? ": " : "", m ? m : "");
      emit(out, json_pack("{s:s, s:I, s:o}", "type", "refbad", "kernel", (json_int_t)cur, "message", sv_json_text(why)));
    }
    emit(out, json_pack("{s:s, s:I, s:o}", "type", "result", "item", (json_int_t)pos, "record", rec));
    if (code == SV_EXIT_NOPERM) {
      sv_gpu_close(g);
      return child_fatal(out, code,
                         "profiling is not permitted on this machine (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES): "
                         "run as root, or with NVreg_RestrictProfilingToAdminUsers=0, or use --no-metrics");
    }
    if (code) {
      /* The context is unusable after a fault; exiting is the only clean reset. */
      return code;
    }
  }
  sv_gpu_close(g);
  return SV_EXIT_OK;
}

int sv_run_one(const sv_plan *plan, size_t k, size_t c, int device) {
  char err[8192];
  sv_gpu_opts o = {.metrics = false, .under_ncu = true, .warmup = 1, .repeats = 1, .max_kernel_ms = 1e30,
                   .device = device};
  sv_gpu *g;
  json_t *dev;
  int rc = sv_gpu_open(&g, &o, &dev, err, sizeof err);
  if (rc) {
    fprintf(stderr, "schedvalidate --run-one: %s\n", err);
    return rc;
  }
  json_decref(dev);
  rc = sv_gpu_kernel_begin(g, &plan->kernels[k], err, sizeof err);
  if (!rc) rc = sv_gpu_run_once(g, c, err, sizeof err) ? SV_EXIT_ERROR : SV_EXIT_OK;
  else rc = SV_EXIT_ERROR;
  if (rc) fprintf(stderr, "schedvalidate --run-one: %s\n", err);
  sv_gpu_close(g);
  return rc;
}

/* ---------------------------------------------------------------- parent */

static volatile sig_atomic_t g_stop;

static void on_stop(int sig) { g_stop = sig; }

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct {
  char *buf;
  size_t len, cap;
} linebuf;

/* Reads what is available; returns 0 at EOF, 1 otherwise. */
static int lb_fill(linebuf *lb, int fd) {
  if (lb->len + 65536 > lb->cap) {
    size_t nc = lb->cap ? lb->cap * 2 : 1 << 17;
    char *nb = realloc(lb->buf, nc);
    if (!nb) return 0;
    lb->buf = nb;
    lb->cap = nc;
  }
  ssize_t n;
  do n = read(fd, lb->buf + lb->len, lb->cap - lb->len - 1);
  while (n < 0 && errno == EINTR);
  if (n <= 0) return 0;
  lb->len += (size_t)n;
  return 1;
}

/* Takes one complete line off the buffer (malloc'ed), or NULL. */
static char *lb_line(linebuf *lb) {
  char *nl = lb->len ? memchr(lb->buf, '\n', lb->len) : NULL;
  if (!nl) return NULL;
  size_t n = (size_t)(nl - lb->buf);
  char *line = malloc(n + 1);
  if (line) {
    memcpy(line, lb->buf, n);
    line[n] = 0;
  }
  memmove(lb->buf, nl + 1, lb->len - n - 1);
  lb->len -= n + 1;
  return line;
}

static void progress(const sv_job *job, size_t pos, const json_t *rec) {
  const sv_item *it = &job->items[pos];
  const sv_kernel *k = &job->plan->kernels[it->kernel];
  const char *st = json_string_value(json_object_get(rec, "status"));
  const json_t *t = json_object_get(rec, "time_us");
  char extra[256] = "";
  if (t)
    snprintf(extra, sizeof extra, ", %.2f us (median of %zu)",
             json_number_value(json_object_get(t, "median")), json_array_size(json_object_get(t, "runs")));
  const char *m = json_string_value(json_object_get(rec, "message"));
  fprintf(stderr, "schedvalidate: [%zu/%zu] %s candidate %lld: %s%s%s%.300s\n", pos + 1, job->n_items,
          k->id, (long long)k->cands[it->cand].id, st ? st : "?", extra, m ? ": " : "", m ? m : "");
}

static void set_record(const sv_job *job, sv_results *res, size_t pos, json_t *rec) {
  json_decref(res->records[pos]);
  res->records[pos] = rec;
  progress(job, pos, rec);
}

static void failed_record(const sv_job *job, sv_results *res, size_t pos, const char *status,
                          const char *why) {
  const sv_candidate *c = &job->plan->kernels[job->items[pos].kernel].cands[job->items[pos].cand];
  set_record(job, res, pos, json_pack("{s:I, s:s, s:o}", "id", (json_int_t)c->id, "status", status, "message", sv_json_text(why)));
}

static void mark_ref_bad(sv_results *res, size_t k, const char *why) {
  res->ref_bad[k] = true;
  free(res->ref_msg[k]);
  res->ref_msg[k] = strdup(why);
}

typedef struct {
  long item; /* item being worked on, -1 none */
  long ref;  /* kernel whose reference is being run, -1 none */
  size_t next; /* first item without a record */
  int fatal;
  char fatal_msg[2048];
} child_state;

static const char *str_or(const json_t *s, const char *dflt) {
  return json_is_string(s) ? json_string_value(s) : dflt;
}

static void handle_line(const sv_job *job, sv_results *res, child_state *cs, const char *line) {
  json_error_t je;
  json_t *m = json_loads(line, 0, &je);
  const char *type = json_string_value(json_object_get(m, "type"));
  if (!type) {
    fprintf(stderr, "schedvalidate: ignoring a malformed line from the child: %.200s\n", line);
  } else if (!strcmp(type, "device")) {
    if (!res->device) res->device = json_incref(json_object_get(m, "device"));
  } else if (!strcmp(type, "begin")) {
    json_t *i = json_object_get(m, "item"), *r = json_object_get(m, "ref");
    cs->item = i ? (long)json_integer_value(i) : -1;
    cs->ref = r ? (long)json_integer_value(r) : -1;
  } else if (!strcmp(type, "result")) {
    long pos = (long)json_integer_value(json_object_get(m, "item"));
    if (pos >= 0 && (size_t)pos < job->n_items) {
      set_record(job, res, (size_t)pos, json_incref(json_object_get(m, "record")));
      cs->next = (size_t)pos + 1;
    }
    cs->item = cs->ref = -1;
  } else if (!strcmp(type, "refbad")) {
    long k = (long)json_integer_value(json_object_get(m, "kernel"));
    if (k >= 0 && (size_t)k < job->plan->n_kernels)
      mark_ref_bad(res, (size_t)k, str_or(json_object_get(m, "message"), "it failed"));
  } else if (!strcmp(type, "fatal")) {
    cs->fatal = (int)json_integer_value(json_object_get(m, "code"));
    snprintf(cs->fatal_msg, sizeof cs->fatal_msg, "%s",
             str_or(json_object_get(m, "message"), "the child failed"));
  }
  json_decref(m);
}

static void describe_status(int st, char *buf, size_t len) {
  if (WIFSIGNALED(st)) snprintf(buf, len, "the runner's child died of signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
  else snprintf(buf, len, "the runner's child exited with status %d", WEXITSTATUS(st));
}

/* One child from item cs->next on. Returns when it ends (or is killed). */
static void supervise(const sv_job *job, sv_results *res, child_state *cs) {
  int fd[2];
  if (pipe(fd)) {
    cs->fatal = SV_EXIT_ERROR;
    snprintf(cs->fatal_msg, sizeof cs->fatal_msg, "pipe: %s", strerror(errno));
    return;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    cs->fatal = SV_EXIT_ERROR;
    snprintf(cs->fatal_msg, sizeof cs->fatal_msg, "fork: %s", strerror(errno));
    close(fd[0]);
    close(fd[1]);
    return;
  }
  if (pid == 0) {
    close(fd[0]);
    FILE *out = fdopen(fd[1], "w");
    _exit(out ? child_main(job, res, cs->next, out) : SV_EXIT_ERROR);
  }
  close(fd[1]);
  linebuf lb = {0};
  double deadline = now_s() + job->timeout_s;
  bool timed_out = false;
  for (;;) {
    double left = deadline - now_s();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    struct pollfd p = {fd[0], POLLIN, 0};
    int pr = poll(&p, 1, (int)(left * 1000) + 1);
    if (g_stop) break;
    if (pr < 0 && errno == EINTR) continue;
    if (pr == 0) continue;
    if (pr < 0 || !lb_fill(&lb, fd[0])) break;
    /* Every line is progress: the limit counts from the last one (a candidate sends none between
       its begin and its result). */
    for (char *line; (line = lb_line(&lb));) {
      handle_line(job, res, cs, line);
      free(line);
      deadline = now_s() + job->timeout_s;
    }
  }
  close(fd[0]);
  free(lb.buf);
  if (timed_out || g_stop) kill(pid, SIGKILL);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  char why[512];
  if (g_stop) {
    cs->item = cs->ref = -1;
    return;
  }
  if (timed_out)
    snprintf(why, sizeof why, "no result within --timeout-s %d s; the runner's child was killed", job->timeout_s);
  else
    describe_status(st, why, sizeof why);
  if (cs->fatal) return;
  int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  if (cs->item >= 0) {
    failed_record(job, res, (size_t)cs->item, timed_out ? "timeout" : "fault", why);
    const sv_item *it = &job->items[cs->item];
    if (it->cand == job->plan->kernels[it->kernel].reference) mark_ref_bad(res, it->kernel, why);
    cs->next = (size_t)cs->item + 1;
  } else if (cs->ref >= 0) {
    char msg[600];
    snprintf(msg, sizeof msg, "%s while it ran the reference", why);
    fprintf(stderr, "schedvalidate: kernel %s: %s\n", job->plan->kernels[cs->ref].id, msg);
    mark_ref_bad(res, (size_t)cs->ref, msg);
  } else if (!res->device && code != SV_EXIT_OK) {
    cs->fatal = SV_EXIT_ERROR;
    snprintf(cs->fatal_msg, sizeof cs->fatal_msg, "%s before it opened the GPU", why);
  } else if (timed_out || (code != SV_EXIT_OK && code != SV_EXIT_RESTART)) {
    fprintf(stderr, "schedvalidate: %s between candidates\n", why);
  }
  cs->item = cs->ref = -1;
}

int sv_run(const sv_job *job, sv_results *res) {
  memset(res, 0, sizeof *res);
  size_t nk = job->plan->n_kernels;
  res->records = calloc(job->n_items ? job->n_items : 1, sizeof *res->records);
  res->ref_bad = calloc(nk ? nk : 1, sizeof *res->ref_bad);
  res->ref_msg = calloc(nk ? nk : 1, sizeof *res->ref_msg);
  if (!res->records || !res->ref_bad || !res->ref_msg) {
    snprintf(res->message, sizeof res->message, "out of memory");
    return res->exit_code = SV_EXIT_ERROR;
  }
  child_state cs = {.item = -1, .ref = -1, .next = 0};
  int stalls = 0;
  struct sigaction sa, old_int, old_term;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop;
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  while (cs.next < job->n_items && !g_stop) {
    size_t before = cs.next;
    supervise(job, res, &cs);
    if (cs.fatal) {
      res->exit_code = cs.fatal;
      snprintf(res->message, sizeof res->message, "%s", cs.fatal_msg);
      break;
    }
    if (cs.next == before) {
      /* No progress: after three children died before finishing item `next`, give it up. */
      if (++stalls >= 3) {
        failed_record(job, res, cs.next, "fault", "the runner's child died three times before finishing it");
        cs.next++;
        stalls = 0;
      }
    } else
      stalls = 0;
  }
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  /* A result line that never came (it should not happen) still leaves a record. */
  for (size_t i = 0; i < cs.next && i < job->n_items; i++)
    if (!res->records[i]) failed_record(job, res, i, "fault", "the runner's child sent no result for it");
  if (g_stop && !res->exit_code) {
    res->interrupted = true;
    fprintf(stderr, "schedvalidate: interrupted by signal %d; %zu of %zu candidates measured\n", (int)g_stop,
            cs.next, job->n_items);
  }
  return res->exit_code;
}

void sv_results_free(sv_results *res, size_t n_items, size_t n_kernels) {
  for (size_t i = 0; res->records && i < n_items; i++) json_decref(res->records[i]);
  for (size_t k = 0; res->ref_msg && k < n_kernels; k++) free(res->ref_msg[k]);
  free(res->records);
  free(res->ref_bad);
  free(res->ref_msg);
  json_decref(res->device);
  memset(res, 0, sizeof *res);
}
