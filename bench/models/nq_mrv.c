// Passes of a search that fills the open row with the fewest free squares first (MRV), against nq_prune.c:
// gcc -O2 -o /tmp/nq_mrv nq_mrv.c && /tmp/nq_mrv 14
// nodes: top-down with filter (passes) vs MRV over rows (choose open row with fewest free squares)
#include <stdio.h>
#include <stdlib.h>
typedef unsigned long long U;
static int n; static U passes, sols;
// board: queens as column per row, absolute diag masks
static void mrv(unsigned open, unsigned cols, U d1, U d2){
  if(!open){ sols++; return; }
  int best=-1, bc=99; unsigned bfree=0;
  for(unsigned o=open;o;o&=o-1){ int r=__builtin_ctz(o); unsigned f=0;
    for(int c=0;c<n;c++) if(!(cols>>c&1) && !(d1>>(r+c)&1) && !(d2>>(r-c+n-1)&1)) f|=1u<<c;
    int k=__builtin_popcount(f); if(k<bc){bc=k;best=r;bfree=f;} if(k==0) return; }
  for(unsigned f=bfree;f;f&=f-1){ int c=__builtin_ctz(f); passes++;
    mrv(open&~(1u<<best), cols|1u<<c, d1|1ULL<<(best+c), d2|1ULL<<(best-c+n-1)); }
}
int main(int argc,char**argv){ n=atoi(argv[1]); mrv((1u<<n)-1,0,0,0); printf("N=%d MRV sols=%llu passes=%llu\n",n,sols,passes);}
