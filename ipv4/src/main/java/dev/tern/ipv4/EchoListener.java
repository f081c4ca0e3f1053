package dev.tern.ipv4;

import java.lang.foreign.MemorySegment;

/** Receives echo replies, and errors about echo requests we sent (for {@code tern ping} and the ping API). */
public interface EchoListener {
    /** An echo reply; its data is valid only during the call. */
    void onEchoReply(int source, int identifier, int sequence, int ttl, MemorySegment data, long offset, int length,
                     long nowNs);

    /** An ICMP error (or a local "host unreachable") about our echo request. */
    void onEchoError(int reporter, int type, int code, int destination, int identifier, int sequence, long nowNs);
}
