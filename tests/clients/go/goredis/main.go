// The client matrix's workload through go-redis (gopkg.in/redis.v5, the go-redis Debian
// ships): `goredis HOST PORT PREFIX`.
//
// Prints one "PASS step", "FAIL step: why" or "SKIP step: why" line per step and exits 1
// when a step failed. Every key and channel starts with PREFIX. This go-redis predates
// streams: XGROUP, XREADGROUP, XINFO and the rest go through Process with a generic
// command, which parses any nesting of arrays.
package main

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"time"

	redis "gopkg.in/redis.v5"
)

var (
	p      string
	r      *redis.Client
	opts   *redis.Options
	failed bool
)

func check(cond bool, what string, args ...interface{}) {
	if !cond {
		panic(fmt.Sprintf(what, args...))
	}
}

func ok(err error) {
	if err != nil {
		panic(err)
	}
}

func step(name string, fn func()) {
	defer func() {
		if e := recover(); e != nil {
			failed = true
			fmt.Printf("FAIL %s: %v\n", name, e)
		}
	}()
	fn()
	fmt.Printf("PASS %s\n", name)
}

// do sends any command and returns its reply (nested arrays as []interface{}).
func do(args ...interface{}) interface{} {
	cmd := redis.NewCmd(args...)
	ok(r.Process(cmd))
	v, err := cmd.Result()
	ok(err)
	return v
}

func list(v interface{}) []interface{} { return v.([]interface{}) }

func fields(v interface{}) map[string]interface{} {
	vals := list(v)
	m := map[string]interface{}{}
	for i := 0; i+1 < len(vals); i += 2 {
		m[vals[i].(string)] = vals[i+1]
	}
	return m
}

func main() {
	p = os.Args[3]
	opts = &redis.Options{Addr: os.Args[1] + ":" + os.Args[2], ReadTimeout: 60 * time.Second,
		WriteTimeout: 60 * time.Second}
	r = redis.NewClient(opts)
	defer r.Close()

	step("strings", func() {
		ok(r.Set(p+"s", "hello", 0).Err())
		check(r.Append(p+"s", " world").Val() == 11, "APPEND")
		check(r.Get(p+"s").Val() == "hello world", "GET")
		check(r.IncrBy(p+"n", 5).Val() == 5, "INCRBY")
		ok(r.Set(p+"t", "v", 100*time.Second).Err())
		ttl := r.TTL(p + "t").Val()
		check(ttl > 0 && ttl <= 100*time.Second, "TTL %v", ttl)
	})
	step("hashes", func() {
		ok(r.HMSet(p+"h", map[string]string{"f1": "v1", "f2": "v2"}).Err())
		m := r.HGetAll(p + "h").Val()
		check(reflect.DeepEqual(m, map[string]string{"f1": "v1", "f2": "v2"}), "HGETALL %v", m)
		check(r.HIncrBy(p+"h", "n", 3).Val() == 3, "HINCRBY")
		check(r.HDel(p+"h", "f1").Val() == 1, "HDEL")
		check(r.HLen(p+"h").Val() == 2, "HLEN")
	})
	step("lists_blpop", func() {
		check(r.RPush(p+"l", "a", "b", "c").Val() == 3, "RPUSH")
		check(reflect.DeepEqual(r.LRange(p+"l", 0, -1).Val(), []string{"a", "b", "c"}), "LRANGE")
		got, err := r.BLPop(5*time.Second, p+"l").Result()
		ok(err)
		check(reflect.DeepEqual(got, []string{p + "l", "a"}), "BLPOP %v", got)
		got, err = r.BLPop(5*time.Second, p+"empty", p+"l").Result()
		ok(err)
		check(reflect.DeepEqual(got, []string{p + "l", "b"}), "BLPOP 2 keys %v", got)
		// A BLPOP that blocks until another connection pushes.
		other := redis.NewClient(opts)
		defer other.Close()
		woken := make(chan *redis.StringSliceCmd, 1)
		go func() { woken <- r.BLPop(60*time.Second, p+"wait") }()
		deadline := time.Now().Add(60 * time.Second)
		for !strings.Contains(other.ClientList().Val(), " flags=b ") {
			check(time.Now().Before(deadline), "BLPOP never blocked")
			time.Sleep(10 * time.Millisecond)
		}
		ok(other.RPush(p+"wait", "late").Err())
		select {
		case cmd := <-woken:
			ok(cmd.Err())
			check(reflect.DeepEqual(cmd.Val(), []string{p + "wait", "late"}), "woken BLPOP %v", cmd.Val())
		case <-time.After(120 * time.Second):
			panic("BLPOP was not woken")
		}
	})
	step("sorted_sets", func() {
		check(r.ZAdd(p+"z", redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: "b"},
			redis.Z{Score: 3, Member: "c"}).Val() == 3, "ZADD")
		check(r.ZIncrBy(p+"z", 10, "a").Val() == 11, "ZINCRBY")
		zs := r.ZRangeWithScores(p+"z", 0, -1).Val()
		check(len(zs) == 3 && zs[0].Member == "b" && zs[2].Score == 11, "ZRANGE %v", zs)
		got := r.ZRangeByScore(p+"z", redis.ZRangeBy{Min: "2", Max: "3"}).Val()
		check(reflect.DeepEqual(got, []string{"b", "c"}), "ZRANGEBYSCORE %v", got)
		check(r.ZRank(p+"z", "a").Val() == 2, "ZRANK")
		check(r.ZScore(p+"z", "c").Val() == 3, "ZSCORE")
	})
	step("scan", func() {
		pairs := []string{}
		for i := 0; i < 300; i++ {
			pairs = append(pairs, fmt.Sprintf("%sscan:%d", p, i), fmt.Sprint(i))
		}
		ok(r.MSet(stringsToIfaces(pairs)...).Err())
		seen, calls, cursor := map[string]bool{}, 0, uint64(0)
		for {
			keys, next, err := r.Scan(cursor, p+"scan:*", 20).Result()
			ok(err)
			for _, k := range keys {
				seen[k] = true
			}
			calls++
			check(calls < 10000, "SCAN did not reach cursor 0")
			if cursor = next; cursor == 0 {
				break
			}
		}
		check(calls > 1, "one SCAN call returned everything")
		check(len(seen) == 300, "SCAN saw %d keys", len(seen))
	})
	step("hscan", func() {
		m := map[string]string{}
		for i := 0; i < 600; i++ {
			m[fmt.Sprintf("f%d", i)] = fmt.Sprint(i)
		}
		ok(r.HMSet(p+"bigh", m).Err())
		seen, calls, cursor := map[string]string{}, 0, uint64(0)
		for {
			kv, next, err := r.HScan(p+"bigh", cursor, "", 20).Result()
			ok(err)
			for i := 0; i+1 < len(kv); i += 2 {
				seen[kv[i]] = kv[i+1]
			}
			calls++
			check(calls < 10000, "HSCAN did not reach cursor 0")
			if cursor = next; cursor == 0 {
				break
			}
		}
		check(calls > 1, "one HSCAN call returned everything")
		check(reflect.DeepEqual(seen, m), "HSCAN saw %d fields", len(seen))
	})
	step("pipeline", func() {
		pipe := r.Pipeline()
		incrs := []*redis.IntCmd{}
		for i := 0; i < 1000; i++ {
			incrs = append(incrs, pipe.Incr(p+"pipe"))
		}
		_, err := pipe.Exec()
		ok(err)
		ok(pipe.Close())
		for i, cmd := range incrs {
			check(cmd.Val() == int64(i+1), "reply %d is %d", i+1, cmd.Val())
		}
		check(r.Get(p+"pipe").Val() == "1000", "GET after the pipeline")
	})
	step("multi_watch", func() {
		var a, b *redis.IntCmd
		_, err := r.TxPipelined(func(pipe *redis.Pipeline) error {
			a, b = pipe.Incr(p+"tx"), pipe.Incr(p+"tx")
			return nil
		})
		ok(err)
		check(a.Val() == 1 && b.Val() == 2, "MULTI/EXEC %d %d", a.Val(), b.Val())
		other := redis.NewClient(opts)
		defer other.Close()
		err = r.Watch(func(tx *redis.Tx) error {
			ok(other.Set(p+"w", "theirs", 0).Err())
			_, err := tx.Pipelined(func(pipe *redis.Pipeline) error {
				pipe.Set(p+"w", "mine", 0)
				return nil
			})
			return err
		}, p+"w")
		check(err == redis.TxFailedErr, "EXEC after a WATCH conflict: %v", err)
		check(r.Get(p+"w").Val() == "theirs", "value after the aborted EXEC")
		ok(r.Watch(func(tx *redis.Tx) error {
			_, err := tx.Pipelined(func(pipe *redis.Pipeline) error {
				pipe.Set(p+"w", "mine", 0)
				return nil
			})
			return err
		}, p+"w"))
		check(r.Get(p+"w").Val() == "mine", "value after EXEC")
	})
	step("pubsub", func() {
		ps, err := r.Subscribe(p + "chan")
		ok(err)
		defer ps.Close()
		first, err := ps.ReceiveTimeout(30 * time.Second)
		ok(err)
		s, isSub := first.(*redis.Subscription)
		check(isSub && s.Kind == "subscribe", "confirmation %v", first)
		check(r.Publish(p+"chan", "hi").Val() == 1, "PUBLISH receivers")
		msg, err := ps.ReceiveTimeout(30 * time.Second)
		ok(err)
		m, isMsg := msg.(*redis.Message)
		check(isMsg && m.Channel == p+"chan" && m.Payload == "hi", "message %v", msg)
	})
	step("eval_evalsha", func() {
		body := "return redis.call('INCRBY', KEYS[1], ARGV[1]) -- " + p
		sum := sha1.Sum([]byte(body))
		sha := hex.EncodeToString(sum[:])
		err := r.EvalSha(sha, []string{p + "ev"}, 2).Err()
		check(err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT"), "EVALSHA unknown: %v", err)
		check(r.Eval(body, []string{p + "ev"}, 2).Val() == int64(2), "EVAL")
		check(r.EvalSha(sha, []string{p + "ev"}, 3).Val() == int64(5), "EVALSHA")
		// Script.Run: EVALSHA, and EVAL on NOSCRIPT.
		got := redis.NewScript("return ARGV[1] .. '"+p+"'").Run(r, nil, "x").Val()
		check(got == "x"+p, "Script.Run %v", got)
	})
	step("consumer_group", func() {
		st := p + "st"
		do("XGROUP", "CREATE", st, "g", "$", "MKSTREAM")
		ids := []string{}
		for i := 0; i < 3; i++ {
			ids = append(ids, do("XADD", st, "*", "n", i).(string))
		}
		streams := list(do("XREADGROUP", "GROUP", "g", "c1", "COUNT", 10, "STREAMS", st, ">"))
		entries := list(list(streams[0])[1])
		check(len(entries) == 3 && list(entries[2])[0] == ids[2], "XREADGROUP")
		check(do("XACK", st, "g", ids[0]) == int64(1), "XACK")
		summary := list(do("XPENDING", st, "g"))
		check(summary[0] == int64(2) && summary[1] == ids[1], "XPENDING summary %v", summary)
		check(len(list(do("XPENDING", st, "g", "-", "+", 10))) == 2, "XPENDING range")
		claimed := list(do("XAUTOCLAIM", st, "g", "c2", 0, "0-0"))
		check(claimed[0] == "0-0" && len(list(claimed[1])) == 2, "XAUTOCLAIM %v", claimed)
		owners := list(list(list(do("XPENDING", st, "g"))[3])[0])
		check(owners[0] == "c2" && owners[1] == "2", "owners %v", owners)
	})
	step("xinfo_stream_full", func() {
		info := fields(do("XINFO", "STREAM", p+"st", "FULL"))
		check(info["length"] == int64(3), "length")
		g := fields(list(info["groups"])[0])
		check(g["name"] == "g" && g["pel-count"] == int64(2), "group %v", g)
		names := []string{}
		for _, cons := range list(g["consumers"]) {
			names = append(names, fields(cons)["name"].(string))
		}
		sort.Strings(names)
		check(reflect.DeepEqual(names, []string{"c1", "c2"}), "consumers %v", names)
	})
	fmt.Println("SKIP resp3: go-redis v5 speaks RESP2 only")
	if failed {
		os.Exit(1)
	}
}

func stringsToIfaces(ss []string) []interface{} {
	out := make([]interface{}, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
