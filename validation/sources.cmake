# Sources of the validation stage, added to the one library (see the top-level CMakeLists.txt).
