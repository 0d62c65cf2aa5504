/* schedpredict: the command line. All the work is in the library. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "schedpredict/analyzer.h"

static const char sp_usage[] =
    "usage: schedpredict [options] FILE.c... [-- COMPILER-ARGS]\n"
    "\n"
    "Finds the OpenACC / OpenMP-target loop nests in C files and extracts their array accesses\n"
    "as affine functions of the loop indices.\n"
    "\n"
    "options:\n"
    "  --dump-ir             print the loop-nest IR as JSON (schema 'schedpredict-ir')\n"
    "  --param NAME=VALUE    value of a run-time variable (function parameter, global)\n"
    "  -p DIR                read compiler arguments from DIR/compile_commands.json\n"
    "  --all-loops           also analyze every outermost loop nest without a directive\n"
    "  -o FILE               write the output to FILE (atomically; an existing FILE is kept\n"
    "                        unless --force)\n"
    "  --force               allow -o to replace an existing file\n"
    "  -q, --quiet           no notes or remarks on stderr, only warnings and errors\n"
    "  --version             print the version\n"
    "  -h, --help            this text\n"
    "  -- ARGS               arguments for the C parser (e.g. -DN=4096 -I include)\n"
    "\n"
    "exit codes: 0 ok; 1 internal error; 2 bad command line; 3 a file is missing, unreadable\n"
    "or not valid C; 4 a bound needs a value (--param) or an offset overflows; 5 no loop nest.\n";

typedef struct sp_cli {
  const char **files;
  int nfiles;
  sp_param *params;
  int nparams;
  const char *output;
  bool force, dump_ir;
  sp_analyzer_options opt;
  bool quiet;
} sp_cli;

static int sp_usage_error(const char *fmt, const char *arg) {
  fputs("schedpredict: error: ", stderr);
  fprintf(stderr, fmt, arg);
  fputs("\n(run 'schedpredict --help' for the options)\n", stderr);
  return SP_EXIT_USAGE;
}

static int sp_parse_param(sp_cli *cli, const char *text) {
  const char *eq = strchr(text, '=');
  if (!eq || eq == text)
    return sp_usage_error("--param takes NAME=VALUE (e.g. --param n=4096), not '%s'", text);
  errno = 0;
  char *end;
  long long v = strtoll(eq + 1, &end, 0);
  if (errno || end == eq + 1 || *end)
    return sp_usage_error("--param %s: the value is not a 64-bit integer", text);
  sp_param *p = realloc(cli->params, (size_t)(cli->nparams + 1) * sizeof *p);
  if (!p) return SP_EXIT_INTERNAL;
  cli->params = p;
  p[cli->nparams].name = strndup(text, (size_t)(eq - text));
  p[cli->nparams].value = v;
  cli->nparams++;
  return SP_EXIT_OK;
}

static int sp_parse_args(sp_cli *cli, int argc, char **argv) {
  cli->files = calloc((size_t)argc, sizeof *cli->files);
  if (!cli->files) return SP_EXIT_INTERNAL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int rc = SP_EXIT_OK;
    if (strcmp(a, "--") == 0) {
      cli->opt.clang_args = (const char *const *)argv + i + 1;
      cli->opt.nclang_args = argc - i - 1;
      break;
    } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      fputs(sp_usage, stdout);
      exit(SP_EXIT_OK);
    } else if (strcmp(a, "--version") == 0) {
      printf("schedpredict %s (IR schema %d)\n", SP_VERSION, SP_IR_SCHEMA_VERSION);
      exit(SP_EXIT_OK);
    } else if (strcmp(a, "--dump-ir") == 0) {
      cli->dump_ir = true;
    } else if (strcmp(a, "--all-loops") == 0) {
      cli->opt.all_loops = true;
    } else if (strcmp(a, "--force") == 0) {
      cli->force = true;
    } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
      cli->quiet = true;
    } else if (strcmp(a, "--param") == 0 || strcmp(a, "-o") == 0 || strcmp(a, "-p") == 0) {
      if (i + 1 >= argc) return sp_usage_error("%s needs a value", a);
      const char *v = argv[++i];
      if (a[1] == '-') rc = sp_parse_param(cli, v);
      else if (a[1] == 'o') cli->output = v;
      else cli->opt.compdb_dir = v;
    } else if (strncmp(a, "--param=", 8) == 0) {
      rc = sp_parse_param(cli, a + 8);
    } else if (a[0] == '-' && a[1]) {
      return sp_usage_error("unknown option '%s'", a);
    } else {
      cli->files[cli->nfiles++] = a;
    }
    if (rc) return rc;
  }
  if (cli->nfiles == 0) return sp_usage_error("%s", "no input file (give one or more .c files)");
  cli->opt.params = cli->params;
  cli->opt.nparams = cli->nparams;
  return SP_EXIT_OK;
}

/* Writes text to path through a temporary file and a rename, so a reader never sees half. */
static int sp_write_output(const char *path, bool force, const char *text) {
  if (!force && access(path, F_OK) == 0) {
    fprintf(stderr, "schedpredict: error: %s exists; pass --force to replace it\n", path);
    return SP_EXIT_USAGE;
  }
  size_t n = strlen(path);
  char *tmp = malloc(n + 16);
  if (!tmp) return SP_EXIT_INTERNAL;
  snprintf(tmp, n + 16, "%s.tmpXXXXXX", path);
  int fd = mkstemp(tmp);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  bool ok = f && fputs(text, f) >= 0;
  if (f) ok = fclose(f) == 0 && ok;
  else if (fd >= 0) close(fd);
  if (ok && rename(tmp, path) != 0) ok = false;
  if (!ok) {
    fprintf(stderr, "schedpredict: error: cannot write %s: %s\n", path, strerror(errno));
    if (fd >= 0) unlink(tmp);
  }
  free(tmp);
  return ok ? SP_EXIT_OK : SP_EXIT_INPUT;
}

int main(int argc, char **argv) {
  sp_cli cli;
  memset(&cli, 0, sizeof cli);
  int rc = sp_parse_args(&cli, argc, argv);
  if (rc == SP_EXIT_OK) {
    sp_diag diag;
    sp_diag_init(&diag, stderr);
    diag.quiet = cli.quiet;
    sp_program prog;
    memset(&prog, 0, sizeof prog);
    rc = sp_analyze(cli.files, cli.nfiles, &cli.opt, &diag, &prog);
    if (rc == SP_EXIT_OK) {
      char *text = NULL;
      size_t len = 0;
      if (cli.dump_ir) {
        text = sp_ir_to_json(&prog);
        if (text) {
          size_t l = strlen(text);
          char *t2 = realloc(text, l + 2);
          if (t2) {
            text = t2;
            strcpy(text + l, "\n");
          }
        }
      } else {
        FILE *mem = open_memstream(&text, &len);
        if (mem) {
          sp_ir_print_summary(mem, &prog);
          fclose(mem);
        }
      }
      if (!text) rc = SP_EXIT_INTERNAL;
      else if (cli.output) rc = sp_write_output(cli.output, cli.force, text);
      else fputs(text, stdout);
      free(text);
    }
    sp_program_free(&prog);
  }
  for (int i = 0; i < cli.nparams; i++) free(cli.params[i].name);
  free(cli.params);
  free(cli.files);
  return rc;
}
