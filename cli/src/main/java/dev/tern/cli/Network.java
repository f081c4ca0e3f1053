package dev.tern.cli;

import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.ethernet.pcap.PcapWriter;
import dev.tern.stack.NetStack;

/**
 * What a network command runs on: its stack, and on the memory wire the peer stack in the same process. Both are
 * polled from the command's thread.
 */
final class Network implements AutoCloseable {
    final NetStack stack;
    final NetStack peer;
    private final MemoryWire wire;
    private final PcapWriter pcap;

    Network(NetStack stack, NetStack peer, MemoryWire wire, PcapWriter pcap) {
        this.stack = stack;
        this.peer = peer;
        this.wire = wire;
        this.pcap = pcap;
    }

    /** One turn of every stack's loop; returns the work done. */
    int poll() {
        int work = stack.doWork();
        if (peer != null) {
            work += peer.doWork();
        }
        return work;
    }

    @Override
    public void close() {
        stack.close();
        if (peer != null) {
            peer.close();
        }
        if (wire != null) {
            wire.close();
        }
        if (pcap != null) {
            pcap.close();
        }
    }
}
