// The owner of the tests' precompiled header (clustersweep_test_pch in cmake/library.cmake): a
// precompiled header needs a target, and the target a source. Never run.
int main() { return 0; }
