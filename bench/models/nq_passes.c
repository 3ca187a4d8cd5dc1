// Passes of the skip kernel's search by row (top-down, mirror-free full board, the kernel's dead-child filter):
// where the work sits. gcc -O2 -o /tmp/nq_passes nq_passes.c && /tmp/nq_passes 15   (bench/NOTES.md, 2026-11-27)
#include <stdio.h>
#include <stdlib.h>
typedef unsigned u;
static int n; static u full; static unsigned long long passes[40], sols;
static u alive(u a, u f){ u low=f&(~f+1u); return a&(~(low*4u-1u)|(f?(0x3fffffffu>>__builtin_clz(f|1u)):0)); }
// node at row `row` with masks c,l,r and candidates a (already filtered); counts passes per row of candidate
static void rec(int row,u c,u l,u r,u a){
  while(a){ u bit=a&-a; a^=bit; passes[row]++;
    u nc=c|bit, nl=(l|bit)<<1, nr=(r|bit)>>1; u na=~(nc|nl|nr)&full;
    if(row+1==n-1){ sols+=__builtin_popcount(na); continue; }
    u f=~(nc|(nl<<1)|(nr>>1))&full; u live=alive(na,f);
    rec(row+1,nc,nl,nr,live);
  }
}
int main(int argc,char**argv){ n=atoi(argv[1]); full=(1u<<n)-1;
  rec(0,0,0,0,full);
  unsigned long long t=0; for(int i=0;i<n;i++) t+=passes[i];
  printf("N=%d sols=%llu passes=%llu\n",n,sols,t);
  for(int i=0;i<n;i++) printf(" row %2d  %6.3f%%\n",i,100.0*passes[i]/t);
}
