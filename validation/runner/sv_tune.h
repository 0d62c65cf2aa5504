/* schedvalidate tune: empirical search of (num_gangs, vector_length[, num_workers]) on the GPU,
   OptACC's protocol beside the model's pick (see validation/runner/README.md, "Search"). */
#ifndef SV_TUNE_H
#define SV_TUNE_H

/* `schedvalidate tune PLAN.json ...`: argv[0] is "tune". Returns the exit status. */
int sv_tune_main(int argc, char **argv);
#endif
