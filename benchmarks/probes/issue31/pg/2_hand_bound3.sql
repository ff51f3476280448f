\set k random(1, 250)
\set c :client_id
SELECT set_config('lock_timeout', '5000', true), set_config('statement_timeout', '5000', true), set_config('synchronous_commit', 'off', true) \; INSERT INTO fg_probe31.hand AS l (k, fence, owner, until) VALUES ('k' || :c || '-' || :k, 1, 'id' || :c, clock_timestamp() + interval '30 seconds') ON CONFLICT (k) DO UPDATE SET fence = l.fence + 1, owner = EXCLUDED.owner, until = EXCLUDED.until WHERE l.owner IS NULL OR l.until <= clock_timestamp() RETURNING fence;
SELECT set_config('lock_timeout', '5000', true), set_config('statement_timeout', '5000', true), set_config('synchronous_commit', 'off', true) \; UPDATE fg_probe31.hand SET owner = NULL, until = NULL WHERE k = 'k' || :c || '-' || :k AND owner = 'id' || :c AND until > clock_timestamp();
