package dev.tern.tcp;

import dev.tern.core.hash.SipHash;

/**
 * Initial sequence numbers per RFC 6528 §3: {@code ISN = M + F(localip, localport, remoteip, remoteport, secretkey)},
 * where M is a clock ticking every 4 µs (RFC 9293 §3.4.1) and F is SipHash-2-4 under the layer's secret key. Each
 * connection's sequence space thus starts at an unpredictable point that still moves forward with time for the same
 * 4-tuple, so a new incarnation starts above an old one's numbers.
 *
 * <p>The same key, with separate domains, also gives each connection its timestamp offset (RFC 7323 §5.4: "a random
 * offset per connection") and the ephemeral port search start (RFC 6056 algorithm 3).
 *
 * <p>An IPv6 address enters all of these, the connection table and SYN cookies as a fold: a keyed SipHash of the
 * whole 128 bits to 32, our address's by {@link #fold}, the peer's by {@link #remoteFold} of both addresses (an IPv6
 * host has several addresses, and the connection key holds no local address: one peer reaching two of ours from one
 * port to one port is two connections). F then still depends on every bit of the 4-tuple and on the secret (RFC
 * 6528 §3 asks no more), and no peer can aim its address at another's fold without the key.
 *
 * <p>Stateless apart from the key and a one-entry memo of {@link #fold}; owned by the shard thread.
 */
final class IsnGenerator {
    private static final long DOMAIN_ISN = 0x1;
    private static final long DOMAIN_TIMESTAMP = 0x2;
    private static final long DOMAIN_PORT = 0x3;
    private static final long DOMAIN_FLOW_LABEL = 0x4;
    private static final long DOMAIN_REMOTE = 0x5;

    private final long key0;
    private final long key1;
    private final long fixedIsn;

    IsnGenerator(long key0, long key1, long fixedIsn) {
        this.key0 = key0;
        this.key1 = key1;
        this.fixedIsn = fixedIsn;
    }

    /** An IPv6 address of ours as 32 bits, under the key (the keys swapped: a domain of its own). */
    int fold(long high, long low) {
        if (high != memoHigh || low != memoLow || !memoSet) {
            memoHigh = high;
            memoLow = low;
            memoFold = (int) SipHash.hash(key1, key0, high, low);
            memoSet = true;
        }
        return memoFold;
    }

    // fold's memo: a host has few addresses of its own, and every segment names one.
    private long memoHigh;
    private long memoLow;
    private int memoFold;
    private boolean memoSet;

    /**
     * A peer's IPv6 address as 32 bits, where IPv4's remote address stands, bound to the address of ours it talks
     * to: the keyed hash of the peer's address, then of that with ours, under the key (its own domain).
     */
    int remoteFold(long remoteHigh, long remoteLow, long localHigh, long localLow) {
        final long remote = SipHash.hash(key1, key0 ^ DOMAIN_REMOTE, remoteHigh, remoteLow);
        return (int) SipHash.hash(key1, key0 ^ DOMAIN_REMOTE, remote ^ localHigh, localLow);
    }

    private static long tuple(int localAddress, int remoteAddress) {
        return ((long) localAddress << 32) | (remoteAddress & 0xFFFF_FFFFL);
    }

    private static long ports(int localPort, int remotePort, long domain) {
        return (domain << 48) | ((long) (localPort & 0xFFFF) << 16) | (remotePort & 0xFFFF);
    }

    int isn(int localAddress, int localPort, int remoteAddress, int remotePort, long nowNs) {
        if (fixedIsn != -1) {
            return (int) fixedIsn;
        }
        final int m = (int) (nowNs / 4000);
        return m + (int) SipHash.hash(key0, key1, tuple(localAddress, remoteAddress),
            ports(localPort, remotePort, DOMAIN_ISN));
    }

    int timestampOffset(int localAddress, int localPort, int remoteAddress, int remotePort) {
        return (int) SipHash.hash(key0, key1, tuple(localAddress, remoteAddress),
            ports(localPort, remotePort, DOMAIN_TIMESTAMP));
    }

    /**
     * An IPv6 connection's flow label (RFC 6437 §3): 20 bits no one can predict, the same for every packet of the
     * flow, never 0 (which says "no label").
     */
    int flowLabel(int localAddress, int localPort, int remoteAddress, int remotePort) {
        final int label = (int) SipHash.hash(key0, key1, tuple(localAddress, remoteAddress),
            ports(localPort, remotePort, DOMAIN_FLOW_LABEL)) & 0xF_FFFF;
        return label == 0 ? 1 : label;
    }

    /** Where to start searching the ephemeral range for a connection to this destination (RFC 6056 §3.3.3). */
    int portOffset(int localAddress, int remoteAddress, int remotePort) {
        return (int) SipHash.hash(key0, key1, tuple(localAddress, remoteAddress), ports(0, remotePort, DOMAIN_PORT))
            & 0x7FFF_FFFF;
    }
}
