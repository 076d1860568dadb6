import json,sys
d=json.load(open(sys.argv[1]))['rl']
print({k:v for k,v in d.items() if k!='iterations'})
for i in d['iterations']:
    print(i['time_ns'], round(i['utilization'],3), i.get('long_tail_idle_card_ns'), [(p['task'][:12],p['time_ns'],p['cards'],round(p['share'],2)) for p in i['phases']])
