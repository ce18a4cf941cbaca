-- The tables and sequences that pg_dump keeps with the extension's data.
SELECT c.relname
FROM pg_extension e, unnest(e.extconfig) AS t(oid), pg_class c
WHERE e.extname = 'matchmaker' AND c.oid = t.oid
ORDER BY 1;
