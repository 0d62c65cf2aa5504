/* N comes from -D (after --, or from compile_commands.json with -p). */
double a[N];
void f(void) {
#pragma acc parallel loop
  for (int i = 0; i < N; i++) a[i] = 1.0;
}
