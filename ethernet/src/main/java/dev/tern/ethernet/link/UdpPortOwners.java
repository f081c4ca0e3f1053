package dev.tern.ethernet.link;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Local UDP ports that one shard of a sharded stack has claimed: every unicast datagram to such a port belongs to that
 * shard, whatever shard {@link ShardSteering}'s hash of its 4-tuple names. It is for a socket that talks to many peers
 * from one port (a server's, an application's {@code DatagramChannel} bound to a port): the hash spreads its peers'
 * datagrams over every shard, and a shard without the socket would answer them with ICMP port unreachable. The link
 * still steers by the hash; the shard a claimed datagram reaches hands it to the claimant ({@link ShardSteering}'s
 * functions that take an owners table say where it goes).
 *
 * <p>One table is shared by all the shards of a stack. A byte per port (64 KiB): 0 for none, else the claimant's
 * index plus one, so 255 shards at most. Claims are written by the shards' control calls and read on every shard's
 * receive path without locks (acquire/release). Thread-safe; reading allocates nothing.
 */
public final class UdpPortOwners {
    /** The most shards a table can name (a byte per port, 0 meaning none). */
    public static final int MAX_SHARDS = 255;
    private static final VarHandle OWNER = MethodHandles.arrayElementVarHandle(byte[].class);
    private static final VarHandle CLAIMS;

    static {
        try {
            CLAIMS = MethodHandles.lookup().findVarHandle(UdpPortOwners.class, "claims", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final byte[] owners = new byte[65536];
    @SuppressWarnings("unused") // through CLAIMS
    private volatile int claims;

    /** Datagrams to {@code port} go to {@code shard} from now on (a later claim of the port replaces this one). */
    public void claim(int port, int shard) {
        checkPort(port);
        if (shard < 0 || shard >= MAX_SHARDS) {
            throw new IllegalArgumentException("shard must be 0.." + (MAX_SHARDS - 1) + ", got " + shard);
        }
        if ((byte) OWNER.getAndSet(owners, port, (byte) (shard + 1)) == 0) {
            CLAIMS.getAndAdd(this, 1);
        }
    }

    /** Ends {@code shard}'s claim of {@code port}; a claim another shard made since stays. */
    public void release(int port, int shard) {
        checkPort(port);
        if (OWNER.compareAndSet(owners, port, (byte) (shard + 1), (byte) 0)) {
            CLAIMS.getAndAdd(this, -1);
        }
    }

    /** The shard that claimed {@code port}, or -1. Allocates nothing. */
    public int owner(int port) {
        return ((byte) OWNER.getAcquire(owners, port) & 0xFF) - 1;
    }

    /** Whether any port is claimed: the receive path looks at ports only then. */
    public boolean any() {
        return (int) CLAIMS.getAcquire(this) != 0;
    }

    private static void checkPort(int port) {
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port must be 1..65535, got " + port);
        }
    }
}
