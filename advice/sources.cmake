# Sources of the advice stage (what a compiler can express, --fix, output formats), added to the
# one library.
list(APPEND SP_CORE_SOURCES
  advice/plan.c
  advice/lowering.c
  advice/fix.c
  advice/formats.c
  advice/output.c
)
