#!/usr/bin/env python3
# NVRTC against PTX per bench record from a tools/dev/s18_ptx_bench.sh run
# (b/<sample>_<mode>_<round>.json): the median of the rounds each, and the
# ratio; mode rs (wgmmas with A in registers spelled too) stands for PTX.
#   tools/dev/ab_table.py bench/results/h100_s21/run2_after_division
import json,glob,collections,statistics,os,sys
data=collections.defaultdict(list)
for f in sorted(glob.glob(sys.argv[1]+'/b/*.json')):
    base=os.path.basename(f)[:-5]
    s,mode,rnd=base.rsplit('_',2)
    try: d=json.load(open(f))
    except Exception as e: print('bad',f,e); continue
    for r in d.get('records',[]):
        if r.get('impl')!='tessel': continue
        key=(s,r.get('variant',''),r.get('pass',''),r.get('dtype',''),str(r.get('size','')))
        data[(key,mode)].append(r.get('ms'))
keys=sorted(set(k for k,m in data))
print(f"{'sample':<18}{'variant':<10}{'pass':<8}{'dt':<5}{'size':<22}{'nvrtc ms':>9}{'ptx ms':>9} ratio  rounds nvrtc | ptx")
for k in keys:
    a=data.get((k,'0'),[]); b=data.get((k,'1'),[]) or data.get((k,'rs'),[])
    if not a or not b: continue
    ma,mb=statistics.median(a),statistics.median(b)
    print(f"{k[0]:<18}{k[1]:<10}{k[2]:<8}{k[3]:<5}{k[4][:21]:<22}{ma:>9.4f}{mb:>9.4f} {mb/ma:.3f}  {[round(x,4) for x in a]} | {[round(x,4) for x in b]}")
