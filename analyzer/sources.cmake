# Sources of the analyzer stage, added to the one library (see the top-level CMakeLists.txt).
list(APPEND SP_CORE_SOURCES
  analyzer/affine.c
  analyzer/diag.c
  analyzer/pragma.c
  analyzer/values.c
  analyzer/probe.c
  analyzer/extract.c
  analyzer/arith.c
  analyzer/codegen.c
  analyzer/depend.c
  analyzer/repeat.c
  analyzer/imperfect.c
  analyzer/ir.c
  analyzer/ir_print.c
  analyzer/analyzer.c
)
