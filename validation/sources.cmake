# Sources of the validation stage, added to the one library (see the top-level CMakeLists.txt).
list(APPEND SP_CORE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/plan.c
  ${CMAKE_CURRENT_LIST_DIR}/compare.c
  ${CMAKE_CURRENT_LIST_DIR}/compare_read.c
  ${CMAKE_CURRENT_LIST_DIR}/compare_report.c
  ${CMAKE_CURRENT_LIST_DIR}/harness.c
  ${CMAKE_CURRENT_LIST_DIR}/placement.c)
