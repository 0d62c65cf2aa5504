// The two special registers the placement probes read (block_sm_map.cu, placement_run.cu).
#ifndef PROBE_SM_CUH
#define PROBE_SM_CUH

// %globaltimer: nanoseconds, one clock for all SMs
__device__ static inline unsigned long long probe_now(void)
{
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// %smid: the SM this thread runs on
__device__ static inline unsigned probe_smid(void)
{
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}

#endif
