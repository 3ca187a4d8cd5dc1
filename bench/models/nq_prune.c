// Passes of a top-down search with the filter looking 0, 1, 2 or all rows ahead (mode 0..3; mode 1 is the
// kernel's): what stronger pruning could save. gcc -O2 -o /tmp/nq_prune nq_prune.c && /tmp/nq_prune 14
#include <stdio.h>
#include <stdlib.h>
typedef unsigned u;
static int n, mode; static u full; static unsigned long long passes, sols;
// free squares of row `row+j` given masks at row+1 (c,l,r after placing at row)
static int dead(int row,u nc,u nl,u nr,u b){ // b placed at row+1
  u c=nc|b, l=(nl|b)<<1, r=(nr|b)>>1; // masks for row+2
  int lim = mode==1?1: mode==2?2: 64;
  for(int j=0;j<lim && row+2+j<=n-1;j++){ if(!(~(c|(l<<j)|(r>>j))&full)) return 1; }
  return 0;
}
static void rec(int row,u c,u l,u r,u a){
  while(a){ u bit=a&-a; a^=bit; passes++;
    u nc=c|bit, nl=(l|bit)<<1, nr=(r|bit)>>1; u na=~(nc|nl|nr)&full;
    if(row+1==n-1){ sols+=__builtin_popcount(na); continue; }
    u live=0; for(u t=na;t;t&=t-1){u b=t&-t; if(mode==0||!dead(row,nc,nl,nr,b)) live|=b;}
    rec(row+1,nc,nl,nr,live);
  }
}
int main(int argc,char**argv){ n=atoi(argv[1]); full=(1u<<n)-1;
  for(mode=0;mode<4;mode++){ passes=sols=0; rec(0,0,0,0,full);
  printf("N=%d mode %d sols=%llu passes=%llu\n",n,mode,sols,passes);}
}
