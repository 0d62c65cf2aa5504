/* The lazy-queue LRU tried on 2026-11-28 against cm_lru.h (README.md here). Not part of the build.
 * cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -I. bench/results/2026-11-28-ceilings/lazy-lru.c cachemodel/lru.c -o /tmp/lazy-lru */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cachemodel/cm_lru.h"
#include "cachemodel/cm_hashmap.h"
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
static uint64_t sm(uint64_t *s){uint64_t z=(*s+=0x9E3779B97F4A7C15ull);z=(z^(z>>30))*0xBF58476D1CE4E5B9ull;z=(z^(z>>27))*0x94D049BB133111EBull;return z^(z>>31);}

/* lazy-queue LRU, fully associative */
typedef struct { uint64_t unit, payload; uint32_t stamp, pad; } qnode;
typedef struct { uint32_t node, stamp; } qent;
typedef struct {
  lru_slot *slot; uint64_t mask; unsigned shift;
  qnode *node; uint32_t cap, used; uint32_t clock;
  qent *ring; uint32_t rcap, head, tail;
} qlru;
static qlru *q_create(uint32_t cap, uint32_t rfac){
  qlru *c=calloc(1,sizeof *c); uint64_t slots=cm_pow2_at_least(2*(uint64_t)cap); unsigned bits=0; while((1ull<<bits)<slots)bits++;
  c->slot=calloc(slots,sizeof *c->slot); c->mask=slots-1; c->shift=32-bits; c->node=calloc(cap,sizeof *c->node); c->cap=cap;
  c->rcap=rfac*cap; c->ring=malloc(c->rcap*sizeof *c->ring); return c;}
static inline uint64_t q_home(const qlru*c,uint32_t h){return c->shift>=32?0:h>>c->shift;}
static inline uint64_t q_probe(const qlru*c,uint64_t unit,uint32_t h){uint64_t i=q_home(c,h);for(;;){lru_slot s=c->slot[i];if(s.node==0||(s.hash==h&&c->node[s.node-1].unit==unit))return i;i=(i+1)&c->mask;}}
static inline uint64_t q_erase(qlru*c,uint64_t hole){uint64_t j=hole;for(;;){j=(j+1)&c->mask;lru_slot nx=c->slot[j];if(nx.node==0)break;uint64_t home=q_home(c,nx.hash);int hib=hole<=j?(home>hole&&home<=j):(home>hole||home<=j);if(!hib){c->slot[hole]=nx;hole=j;}}c->slot[hole].node=0;return hole;}
static void q_compact(qlru*c){uint32_t k=0;for(uint32_t i=c->head;i<c->tail;i++){qent e=c->ring[i];if(c->node[e.node].stamp==e.stamp)c->ring[k++]=e;}c->head=0;c->tail=k;}
static inline void q_push(qlru*c,uint32_t i){ if(c->tail==c->rcap) q_compact(c); uint32_t st=++c->clock; c->node[i].stamp=st; c->ring[c->tail++]=(qent){i,st};}
static inline int q_access(qlru*c,uint64_t unit){
  uint32_t h=lru_hash(unit); uint64_t si=q_probe(c,unit,h);
  if(c->slot[si].node){uint32_t i=c->slot[si].node-1; if(c->node[i].stamp!=c->clock) q_push(c,i); return 1;}
  uint32_t i;
  if(c->used<c->cap) i=c->used++;
  else { for(;;){qent e=c->ring[c->head++]; if(c->node[e.node].stamp==e.stamp){i=e.node;break;}}
    qnode*v=&c->node[i]; uint64_t j=q_home(c,lru_hash(v->unit)); while(c->slot[j].node!=i+1)j=(j+1)&c->mask;
    uint64_t hole=q_erase(c,j); uint64_t home=q_home(c,h); if(((hole-home)&c->mask)<((si-home)&c->mask))si=hole; }
  c->node[i].unit=unit;c->node[i].payload=0;c->slot[si].hash=h;c->slot[si].node=i+1;q_push(c,i);return 0;}

static uint64_t *gen_stream(size_t n, uint64_t uni){ uint64_t *u=malloc(n*8),s=42,hot=0,walk=1<<20; int rep=0;
  for(size_t k=0;k<n;k++){uint64_t r=sm(&s)%10; if(k%64==0)hot++; if(r<5)u[k]=hot+sm(&s)%512; else if(r<8){u[k]=walk; if(++rep==4){rep=0;walk++;}} else u[k]=(1ull<<40)+sm(&s)%uni;} return u;}
int main(int argc,char**argv){
  uint64_t caps[]={1024,2048,1638400}; uint64_t unis[]={1<<20,1<<20,1<<24};
  for(int t=0;t<3;t++){ size_t n=1<<23; uint64_t *u=gen_stream(n,unis[t]); size_t reps=t<2?12:4;
    sp_cm_lru *L=sp_cm_lru_create(caps[t]); long h1=0; double t0=now();
    for(size_t r=0;r<reps;r++)for(size_t k=0;k<n;k++){sp_cm_lookup res; cm_lru_lookup_as(L,u[k],SP_CM_LOOKUP_INSERT,&res,0); h1+=res.hit;}
    double d1=now()-t0;
    for(uint32_t rf=2;rf<=8;rf*=2){ qlru*Q=q_create(caps[t],rf); long h2=0; t0=now();
      for(size_t r=0;r<reps;r++)for(size_t k=0;k<n;k++)h2+=q_access(Q,u[k]);
      double d2=now()-t0;
      printf("cap %8lu: list %.1f M/s, queue(r=%u) %.1f M/s, hits %ld %ld %s\n",(unsigned long)caps[t],reps*n/d1/1e6,rf,reps*n/d2/1e6,h1,h2,h1==h2?"same":"DIFFER");}
  }
}
