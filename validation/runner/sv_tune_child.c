/* schedvalidate tune: the GPU child (see sv_tune_child.h). Requests and replies are JSON lines:
     parent -> child  {"op":"kernel","kernel":K,"cands":[...],"reference":true}
                      {"op":"point","cand":C,"grid":[..],"block":[..],"check":true,"max_ms":M}
     child -> parent  {"type":"device","device":{...}}           once, after the GPU opened
                      {"type":"kernel","ok":true,"ref_ok":false,"message":"..."}
                      {"type":"result","record":{...}}
                      {"type":"fatal","code":C,"message":"..."}  then it exits with C
   The child exits after a fault (the context is unusable) and at the end of its input. */
#include "sv_tune_child.h"

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

static void send_line(FILE *out, json_t *obj) {
  char *s = json_dumps(obj, JSON_COMPACT);
  if (s) fprintf(out, "%s\n", s);
  fflush(out);
  free(s);
  json_decref(obj);
}

static int child_kernel(sv_gpu *g, const sv_plan *plan, const json_t *req, FILE *out) {
  char err[8192];
  json_int_t k = json_integer_value(json_object_get(req, "kernel"));
  if (k < 0 || (size_t)k >= plan->n_kernels) return SV_EXIT_ERROR;
  const sv_kernel *kern = &plan->kernels[k];
  int rc = sv_gpu_kernel_begin(g, kern, err, sizeof err);
  if (rc == 1) {
    send_line(out, json_pack("{s:s, s:b, s:o}", "type", "kernel", "ok", 0, "message", sv_json_text(err)));
    return 0;
  }
  if (rc) return rc;
  const json_t *cands = json_object_get(req, "cands");
  size_t n = json_array_size(cands), m = 0;
  size_t *idx = malloc((n + 1) * sizeof *idx);
  if (!idx) return SV_EXIT_ERROR;
  idx[m++] = kern->reference;
  for (size_t i = 0; i < n; i++) {
    json_int_t c = json_integer_value(json_array_get(cands, i));
    bool dup = c < 0 || (size_t)c >= kern->n_cands; /* the default is often also the model's best */
    for (size_t j = 0; j < m && !dup; j++) dup = idx[j] == (size_t)c;
    if (!dup) idx[m++] = (size_t)c;
  }
  sv_gpu_precompile(g, idx, m);
  free(idx);
  bool ref_ok = false;
  if (json_is_true(json_object_get(req, "reference"))) {
    int rr = sv_gpu_reference(g, kern->reference, err, sizeof err);
    if (rr > 1) return rr; /* a fault: the parent notes it and does not ask again */
    ref_ok = rr == 0;
    if (!ref_ok) sv_gpu_reference_failed(g, err);
  } else {
    snprintf(err, sizeof err, "%s", "the reference candidate failed in an earlier child");
    sv_gpu_reference_failed(g, err);
  }
  send_line(out, json_pack("{s:s, s:b, s:b, s:o}", "type", "kernel", "ok", 1, "ref_ok", ref_ok, "message",
                           ref_ok ? json_string("") : sv_json_text(err)));
  return 0;
}

static int child_main(const sv_plan *plan, const sv_gpu_opts *o, FILE *in, FILE *out) {
  char err[8192];
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  sv_gpu *g;
  json_t *dev;
  int rc = sv_gpu_open(&g, o, &dev, err, sizeof err);
  if (rc) {
    send_line(out, json_pack("{s:s, s:i, s:o}", "type", "fatal", "code", rc, "message", sv_json_text(err)));
    return rc;
  }
  send_line(out, json_pack("{s:s, s:o}", "type", "device", "device", dev));
  char *line = NULL;
  size_t cap = 0;
  rc = SV_EXIT_OK;
  while (rc == SV_EXIT_OK && getline(&line, &cap, in) > 0) {
    json_t *req = json_loads(line, 0, NULL);
    const char *op = json_string_value(json_object_get(req, "op"));
    if (op && !strcmp(op, "kernel")) {
      rc = child_kernel(g, plan, req, out);
    } else if (op && !strcmp(op, "point")) {
      json_int_t c = json_integer_value(json_object_get(req, "cand"));
      unsigned grid[3], block[3];
      for (int i = 0; i < 3; i++) {
        grid[i] = (unsigned)json_integer_value(json_array_get(json_object_get(req, "grid"), (size_t)i));
        block[i] = (unsigned)json_integer_value(json_array_get(json_object_get(req, "block"), (size_t)i));
      }
      int code = SV_EXIT_OK;
      json_t *rec = sv_gpu_candidate_at(g, (size_t)c, grid, block, json_is_true(json_object_get(req, "check")),
                                        json_number_value(json_object_get(req, "max_ms")), &code);
      send_line(out, json_pack("{s:s, s:o}", "type", "result", "record", rec));
      rc = code;
    }
    json_decref(req);
  }
  free(line);
  if (rc == SV_EXIT_OK) sv_gpu_close(g); /* after a fault the context is unusable: just exit */
  return rc;
}

/* ---------------------------------------------------------------- parent */

struct sv_tchild {
  const sv_plan *plan;
  sv_gpu_opts o;
  int timeout_s;
  pid_t pid;
  int to, from;
  char *buf;
  size_t len, cap;
  json_t *device;
  long kernel;       /* current kernel, -1 none */
  size_t *cands, n_cands;
  bool ready;        /* the child has the current kernel set up */
  bool ref_known, ref_ok;
  char ref_msg[1024];
  char broken[1024]; /* why the current kernel cannot be set up again, "" when it can */
};

double sv_tchild_clock_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

sv_tchild *sv_tchild_new(const sv_plan *plan, const sv_gpu_opts *o, int timeout_s) {
  sv_tchild *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->plan = plan;
  c->o = *o;
  c->timeout_s = timeout_s;
  c->to = c->from = -1;
  c->kernel = -1;
  signal(SIGPIPE, SIG_IGN); /* a child that died is seen at the reply, not as a signal here */
  return c;
}

/* Ends the child: closes its input (it then exits), kills it first with kill_it, and reaps it;
   why gets how it ended. */
static void stop_child(sv_tchild *c, bool kill_it, char *why, size_t len) {
  if (c->pid <= 0) return;
  if (kill_it) kill(c->pid, SIGKILL);
  if (c->to >= 0) close(c->to);
  int st = 0;
  while (waitpid(c->pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (why && len) {
    if (WIFSIGNALED(st))
      snprintf(why, len, "the runner's child died of signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
    else
      snprintf(why, len, "the runner's child exited with status %d", WEXITSTATUS(st));
  }
  close(c->from);
  c->pid = 0;
  c->to = c->from = -1;
  c->len = 0;
  c->ready = false;
}

void sv_tchild_free(sv_tchild *c) {
  if (!c) return;
  stop_child(c, false, NULL, 0); /* closing its input ends it: the child closes its GPU and exits */
  free(c->buf);
  free(c->cands);
  json_decref(c->device);
  free(c);
}

/* The next reply line: 0 with *reply, -1 the child ended, -2 nothing for timeout_s. */
static int read_reply(sv_tchild *c, json_t **reply) {
  double deadline = sv_tchild_clock_s() + c->timeout_s;
  for (;;) {
    char *nl = c->len ? memchr(c->buf, '\n', c->len) : NULL;
    if (nl) {
      *nl = 0;
      *reply = json_loads(c->buf, 0, NULL);
      size_t used = (size_t)(nl - c->buf) + 1;
      memmove(c->buf, nl + 1, c->len - used);
      c->len -= used;
      if (*reply) return 0;
      continue; /* a malformed line: skip it */
    }
    double left = deadline - sv_tchild_clock_s();
    if (left <= 0) return -2;
    struct pollfd p = {c->from, POLLIN, 0};
    int pr = poll(&p, 1, (int)(left * 1000) + 1);
    if (pr < 0 && errno == EINTR) return -3; /* a signal: the caller decides */
    if (pr <= 0) continue;
    if (c->len + 65536 > c->cap) {
      size_t nc = c->cap ? 2 * c->cap : 1 << 17;
      char *nb = realloc(c->buf, nc);
      if (!nb) return -1;
      c->buf = nb;
      c->cap = nc;
    }
    ssize_t n = read(c->from, c->buf + c->len, c->cap - c->len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    c->len += (size_t)n;
  }
}

static const char *reply_type(const json_t *r) { return json_string_value(json_object_get(r, "type")); }

static int fatal_of(const json_t *r, char *why, size_t len) {
  const char *m = json_string_value(json_object_get(r, "message"));
  snprintf(why, len, "%s", m ? m : "the runner's child failed");
  int code = (int)json_integer_value(json_object_get(r, "code"));
  return code > 1 ? code : SV_EXIT_ERROR;
}

static int spawn(sv_tchild *c, char *why, size_t len) {
  int down[2], up[2];
  if (pipe(down)) return snprintf(why, len, "pipe: %s", strerror(errno)), SV_EXIT_ERROR;
  if (pipe(up)) {
    close(down[0]);
    close(down[1]);
    return snprintf(why, len, "pipe: %s", strerror(errno)), SV_EXIT_ERROR;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return snprintf(why, len, "fork: %s", strerror(errno)), SV_EXIT_ERROR;
  if (pid == 0) {
    close(down[1]);
    close(up[0]);
    FILE *in = fdopen(down[0], "r"), *out = fdopen(up[1], "w");
    _exit(in && out ? child_main(c->plan, &c->o, in, out) : SV_EXIT_ERROR);
  }
  close(down[0]);
  close(up[1]);
  c->pid = pid;
  c->to = down[1];
  c->from = up[0];
  c->len = 0;
  json_t *r = NULL;
  int rr = read_reply(c, &r);
  const char *t = rr == 0 ? reply_type(r) : NULL;
  int rc = SV_EXIT_OK;
  if (t && !strcmp(t, "device")) {
    if (!c->device) c->device = json_incref(json_object_get(r, "device"));
  } else if (t && !strcmp(t, "fatal")) {
    rc = fatal_of(r, why, len);
    stop_child(c, true, NULL, 0);
  } else {
    stop_child(c, true, why, len);
    size_t n = strlen(why);
    snprintf(why + n, len - n, " before it opened the GPU");
    rc = SV_EXIT_ERROR;
  }
  json_decref(r);
  return rc;
}

static int send_req(sv_tchild *c, json_t *req) {
  char *s = json_dumps(req, JSON_COMPACT);
  json_decref(req);
  if (!s) return -1;
  size_t n = strlen(s);
  s[n] = '\n'; /* json_dumps' NUL becomes the line end */
  int rc = 0;
  for (size_t off = 0; off <= n && !rc;) {
    ssize_t w = write(c->to, s + off, n + 1 - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) rc = -1;
    else off += (size_t)w;
  }
  free(s);
  return rc;
}

/* Starts a child and sets up the current kernel in it when needed. */
static int ensure_kernel(sv_tchild *c, char *why, size_t len) {
  for (int attempt = 0; attempt < 3; attempt++) {
    if (c->pid <= 0) {
      int rc = spawn(c, why, len);
      if (rc) return rc;
    }
    if (c->ready) return 0;
    json_t *cands = json_array();
    for (size_t i = 0; i < c->n_cands; i++) json_array_append_new(cands, json_integer((json_int_t)c->cands[i]));
    bool run_ref = !c->ref_known || c->ref_ok;
    json_t *r = NULL;
    int rr = send_req(c, json_pack("{s:s, s:I, s:o, s:b}", "op", "kernel", "kernel", (json_int_t)c->kernel, "cands",
                                   cands, "reference", run_ref))
                 ? -1
                 : read_reply(c, &r);
    const char *t = rr == 0 ? reply_type(r) : NULL;
    if (t && !strcmp(t, "kernel")) {
      bool ok = json_is_true(json_object_get(r, "ok"));
      const char *m = json_string_value(json_object_get(r, "message"));
      if (ok && run_ref) {
        c->ref_known = true;
        c->ref_ok = json_is_true(json_object_get(r, "ref_ok"));
        snprintf(c->ref_msg, sizeof c->ref_msg, "%.1000s", m ? m : "");
      }
      json_decref(r);
      if (!ok) {
        snprintf(why, len, "%s", m ? m : "the kernel does not fit");
        return -1;
      }
      c->ready = true;
      return 0;
    }
    if (t && !strcmp(t, "fatal")) {
      int code = fatal_of(r, why, len);
      json_decref(r);
      stop_child(c, true, NULL, 0);
      return code;
    }
    json_decref(r);
    char how[512];
    stop_child(c, true, how, sizeof how);
    if (run_ref) { /* it died running the reference: go on without one */
      c->ref_known = true;
      c->ref_ok = false;
      snprintf(c->ref_msg, sizeof c->ref_msg, "%s while it ran the reference", rr == -2 ? "no reply in time" : how);
    }
    snprintf(why, len, "setting up the kernel: %s", rr == -2 ? "no reply within --timeout-s" : how);
  }
  return -1;
}

int sv_tchild_kernel(sv_tchild *c, size_t k, const size_t *cands, size_t n, char *why, size_t len) {
  free(c->cands);
  c->cands = malloc((n ? n : 1) * sizeof *c->cands);
  if (!c->cands) return snprintf(why, len, "out of memory"), SV_EXIT_ERROR;
  memcpy(c->cands, cands, n * sizeof *cands);
  c->n_cands = n;
  c->kernel = (long)k;
  c->ready = false;
  c->ref_known = c->ref_ok = false;
  c->ref_msg[0] = c->broken[0] = 0;
  return ensure_kernel(c, why, len);
}

bool sv_tchild_reference_ok(const sv_tchild *c, const char **why) {
  if (why) *why = c->ref_msg;
  return c->ref_known && c->ref_ok;
}

static json_t *failed(const sv_plan *plan, long k, size_t cand, const char *status, const char *why) {
  return json_pack("{s:I, s:s, s:o}", "id", (json_int_t)plan->kernels[k].cands[cand].id, "status", status, "message",
                   sv_json_text(why));
}

json_t *sv_tchild_point(sv_tchild *c, size_t cand, const unsigned grid[3], const unsigned block[3], bool check,
                        double max_kernel_ms, int *fatal, char *why, size_t len) {
  *fatal = 0;
  if (c->broken[0]) return failed(c->plan, c->kernel, cand, "fault", c->broken);
  int rc = ensure_kernel(c, why, len);
  if (rc > 0) {
    *fatal = rc;
    return NULL;
  }
  if (rc < 0) { /* three children failed to set the kernel up: the rest of its points fail at once */
    snprintf(c->broken, sizeof c->broken, "not run: after a failed point the kernel could not be set up again: %.900s", why);
    return failed(c->plan, c->kernel, cand, "fault", c->broken);
  }
  json_t *req = json_pack("{s:s, s:I, s:[i,i,i], s:[i,i,i], s:b, s:f}", "op", "point", "cand", (json_int_t)cand,
                          "grid", grid[0], grid[1], grid[2], "block", block[0], block[1], block[2], "check", check,
                          "max_ms", max_kernel_ms);
  json_t *r = NULL;
  int rr = send_req(c, req) ? -1 : read_reply(c, &r);
  if (rr == -3) { /* interrupted by a signal: the caller stops */
    stop_child(c, true, NULL, 0);
    *fatal = SV_EXIT_ERROR;
    snprintf(why, len, "interrupted");
    return NULL;
  }
  const char *t = rr == 0 ? reply_type(r) : NULL;
  if (t && !strcmp(t, "result")) {
    json_t *rec = json_incref(json_object_get(r, "record"));
    json_decref(r);
    const char *st = json_string_value(json_object_get(rec, "status"));
    if (st && !strcmp(st, "fault")) stop_child(c, false, NULL, 0); /* it exits: the context is dead */
    return rec;
  }
  json_decref(r);
  char how[512];
  if (rr == -2) {
    stop_child(c, true, NULL, 0);
    snprintf(how, sizeof how, "no result within --timeout-s %d s; the runner's child was killed", c->timeout_s);
    return failed(c->plan, c->kernel, cand, "timeout", how);
  }
  stop_child(c, true, how, sizeof how);
  return failed(c->plan, c->kernel, cand, "fault", how);
}

const json_t *sv_tchild_device(const sv_tchild *c) { return c->device; }
