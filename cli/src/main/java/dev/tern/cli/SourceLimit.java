package dev.tern.cli;

import org.agrona.collections.Int2IntHashMap;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * How many connections each source address holds in one service, and whether it may open another: {@code tern serve
 * --max-per-source N}, as nginx's {@code limit_conn} keyed by the client's address. One client (a slow-loris run, a
 * runaway pool) then cannot take every slot of the connection table from the others. Counted per shard, as each shard
 * serves its own flows; a connection over the limit is counted in {@code serve.conn.source_limit}.
 */
final class SourceLimit {
    /** No limit. */
    static final SourceLimit NONE = new SourceLimit(0, null);

    private final int max;
    private final AtomicCounter refused;
    /** Connections held, by source address (absent: none). */
    private final Int2IntHashMap held = new Int2IntHashMap(0);

    private SourceLimit(int max, AtomicCounter refused) {
        this.max = max;
        this.refused = refused;
    }

    /** At most {@code max} connections per source (above 0), refusals counted in {@code refused}. */
    static SourceLimit of(int max, AtomicCounter refused) {
        if (max <= 0) {
            throw new IllegalArgumentException("limit not above 0: " + max);
        }
        return new SourceLimit(max, refused);
    }

    /** A connection from {@code source} was accepted: whether it may stay (and is counted as held). */
    boolean admit(int source) {
        if (max == 0) {
            return true;
        }
        final int now = held.get(source);
        if (now >= max) {
            refused.increment();
            return false;
        }
        held.put(source, now + 1);
        return true;
    }

    /** A connection {@link #admit admitted} from {@code source} ended. */
    void release(int source) {
        if (max == 0) {
            return;
        }
        final int now = held.get(source);
        if (now <= 1) {
            held.remove(source);
        } else {
            held.put(source, now - 1);
        }
    }

    /** Sources holding at least one connection (for tests). */
    int sources() {
        return held.size();
    }
}
