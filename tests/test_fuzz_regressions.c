/* Every input the fuzzer ever crashed on (tests/inputs/fuzz/), through the fuzz harness itself:
 * under the sanitizer build a regression aborts the test. */
#include <dirent.h>

#include "fuzz/fuzz_analyzer.c"
#include "tests/sp_test.h"

int main(void) {
  DIR *d = opendir("tests/inputs/fuzz");
  CHECK(d != NULL);
  if (!d) return SP_TEST_END();
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    char path[512];
    snprintf(path, sizeof path, "tests/inputs/fuzz/%s", e->d_name);
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    if (!f) continue;
    static uint8_t buf[65536];
    size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    CHECK_EQ_INT(LLVMFuzzerTestOneInput(buf, len), 0);
    n++;
  }
  closedir(d);
  CHECK(n > 0);
  fprintf(stderr, "%d fuzz regression inputs\n", n);
  return SP_TEST_END();
}
