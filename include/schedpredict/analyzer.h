/* The analyzer: C source (libclang) -> loop-nest IR. */
#ifndef SCHEDPREDICT_ANALYZER_H
#define SCHEDPREDICT_ANALYZER_H

#include <stdio.h>

#include "schedpredict/diag.h"
#include "schedpredict/ir.h"

typedef struct sp_param {
  char *name;
  int64_t value;
} sp_param;

typedef struct sp_analyzer_options {
  const char *const *clang_args; /* compiler arguments (after `--`), may be NULL */
  int nclang_args;
  const char *compdb_dir; /* -p DIR: read compile_commands.json there, NULL for none */
  const sp_param *params; /* --param name=value */
  int nparams;
  bool all_loops; /* also every outermost loop nest with no directive */
  /* In-memory contents for the files (fuzzing, tests); NULL to read them from disk. */
  const char *unsaved_contents;
  size_t unsaved_length;
} sp_analyzer_options;

/* Exit codes shared by the executables (documented in README and --help). */
enum {
  SP_EXIT_OK = 0,
  SP_EXIT_INTERNAL = 1,   /* a bug: please report it */
  SP_EXIT_USAGE = 2,      /* bad command line */
  SP_EXIT_INPUT = 3,      /* file missing, unreadable, or not valid C (clang's errors shown) */
  SP_EXIT_VALUE = 4,      /* a bound needs a value nobody gave, or an offset overflows */
  SP_EXIT_NO_NESTS = 5,   /* the input parsed but holds no loop nest to schedule */
};

/* Analyzes the files and appends their nests to *out. Problems are reported through diag.
 * Returns SP_EXIT_OK or one of the error exit codes above; *out is valid (maybe partial) either
 * way and must be freed with sp_program_free. */
int sp_analyze(const char *const *files, int nfiles, const sp_analyzer_options *opt,
               sp_diag *diag, sp_program *out);

#endif
