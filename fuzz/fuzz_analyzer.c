/* libFuzzer harness for the analyzer: each input is the contents of a C file, analyzed as
 * fuzz.c (with -DN=64 and --param n=64 so most mutated examples keep their sizes). The
 * analyzer must never crash, hang or leak, whatever the input. Build and run: scripts/fuzz.sh */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "schedpredict/analyzer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 64 * 1024) return 0;
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = 0;
  static const char *const args[] = {"-DN=64", "-DNX=16", "-DNY=16", "-DNZ=16"};
  sp_param params[] = {{"n", 64}, {"m", 48}, {"ni", 32}, {"nj", 32}, {"nk", 32}};
  sp_analyzer_options opt;
  memset(&opt, 0, sizeof opt);
  opt.clang_args = args;
  opt.nclang_args = 4;
  opt.params = params;
  opt.nparams = 5;
  opt.all_loops = size % 2 == 0;
  opt.unsaved_contents = text;
  opt.unsaved_length = size;
  sp_diag diag;
  sp_diag_init(&diag, NULL);
  sp_program prog;
  memset(&prog, 0, sizeof prog);
  const char *files[] = {"fuzz.c"};
  sp_analyze(files, 1, &opt, &diag, &prog);
  char *json = sp_ir_to_json(&prog);
  free(json);
  sp_ir_print_summary(NULL, &prog);
  sp_program_free(&prog);
  free(text);
  return 0;
}
