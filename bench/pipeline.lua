-- The classic wrk pipelining script (wrk/scripts/pipeline.lua, adapted):
-- every write carries DEPTH requests back to back, and wrk counts each
-- response. Usage: wrk -t1 -c10 -d5s -s bench/pipeline.lua URL -- 16

init = function(args)
   local depth = tonumber(args[1]) or 16
   local r = {}
   for i = 1, depth do
      r[i] = wrk.format()
   end
   req = table.concat(r)
end

request = function()
   return req
end
