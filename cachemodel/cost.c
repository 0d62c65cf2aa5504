/* The dissertation's memory access cost (Sec. 7.3.4, Eq. 7.3-7.7) and derived rates from the
 * memory system's counters (include/schedpredict/memsys.h).
 *
 *   Cost_mem = Mem_L1 + Mem_L2 + Mem_DRAM                                          (7.4)
 *   Mem_L1   = global_loads * (1 - L1_miss_rate) * L1_latency                      (7.5)
 *   Mem_L2   = global_loads * L1_miss_rate * f * L2_latency                        (7.6)
 *   Mem_DRAM = global_loads * L1_miss_rate * L2_miss_rate * f * DRAM_latency       (7.7)
 *
 * global_loads = ld_sectors (L1 load transactions: 128 B on Kepler, 32 B sectors later);
 * L1_miss_rate = 1 - ld_l1_hit_sectors / ld_sectors (1 when L1 does not cache loads: every
 * transaction goes to L2); L2_miss_rate = 1 - l2_read_hit_sectors / l2_read_sectors;
 * f = L1 transaction bytes / L2 sector bytes (the dissertation's 4 = 128 / 32; 1 on sectored
 * L1s). Latencies: arch l1_hit_latency_cycles, l2_hit_latency_cycles (near partition),
 * dram_latency_cycles. Note that Eq. 7.6 charges f L2 transactions per L1 miss whatever the
 * lanes touched, so on Kepler it can differ from l2_read_sectors; the formula is kept exactly. */
#include <stddef.h>

#include "schedpredict/memsys.h"

static double ratio(int64_t num, int64_t den)
{
  return den > 0 ? (double)num / (double)den : 0.0;
}

double sp_cm_l1_hit_rate(const sp_cm_counters *c)
{
  return ratio(c->ld_l1_hit_sectors, c->ld_sectors);
}

double sp_cm_l2_read_hit_rate(const sp_cm_counters *c)
{
  return ratio(c->l2_read_hit_sectors, c->l2_read_sectors);
}

double sp_cm_l2_raw_hit_rate_estimate(const sp_cm_counters *c, const sp_arch *arch)
{
  double n = (double)c->l2_read_sectors, h = (double)c->l2_read_hit_sectors;
  if (arch && arch->l2_fill_bytes > arch->l2_sector_bytes) {
    double f = (double)c->l2_read_fill_sectors;
    return n + f > 0 ? h / (n + f) : 0.0;
  }
  int p = arch && arch->l2_partitions > 1 ? arch->l2_partitions : 1;
  double extra = (n - h) * (double)(p - 1) / (double)p;
  return n + extra > 0 ? (h + extra) / (n + extra) : 0.0;
}

double sp_cm_cost_xu_ex(const sp_cm_counters *c, const sp_arch *arch, int l1_transaction_bytes,
                        double parts[3])
{
  double loads = (double)c->ld_sectors;
  double l1_miss = c->ld_sectors > 0 ? 1.0 - sp_cm_l1_hit_rate(c) : 0.0;
  double l2_miss = c->l2_read_sectors > 0 ? 1.0 - sp_cm_l2_read_hit_rate(c) : 0.0;
  int l2_sector = arch->l2_sector_bytes > 0 ? arch->l2_sector_bytes : 32;
  double f = l1_transaction_bytes > 0 ? (double)l1_transaction_bytes / l2_sector : 1.0;
  double mem_l1 = loads * (1.0 - l1_miss) * arch->l1_hit_latency_cycles;
  double mem_l2 = loads * l1_miss * f * arch->l2_hit_latency_cycles;
  double mem_dram = loads * l1_miss * l2_miss * f * arch->dram_latency_cycles;
  if (parts) {
    parts[0] = mem_l1;
    parts[1] = mem_l2;
    parts[2] = mem_dram;
  }
  return mem_l1 + mem_l2 + mem_dram;
}

double sp_cm_cost_xu(const sp_cm_counters *c, const sp_arch *arch)
{
  return sp_cm_cost_xu_ex(c, arch, arch->l1_sector_bytes, NULL);
}
