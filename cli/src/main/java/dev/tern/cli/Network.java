package dev.tern.cli;

import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.ethernet.pcap.PcapWriter;
import dev.tern.stack.NetStack;

/**
 * What a network command runs on: its stack, and on the memory wire the peer stack in the same process. Both are
 * polled from the command's thread. A sharded stack ({@code tern serve --shards N}) has several stacks, the shards,
 * each with its own copy of every service: {@link #pollShard} polls one shard and its services (and, with shard 0,
 * the memory peer), so that each shard can run on a thread of its own.
 */
final class Network implements AutoCloseable {
    /** The ports the memory-wire peer answers echo (RFC 862, UDP and TCP) and discard (RFC 863, TCP) on. */
    static final int PEER_ECHO_PORT = 7;
    static final int PEER_DISCARD_PORT = 9;

    /** The command's stack; shard 0 of a sharded stack. */
    final NetStack stack;
    final NetStack peer;
    /** The shards, in order; only {@link #stack} unless sharded. */
    final java.util.List<NetStack> shards;
    private final dev.tern.stack.StackShards sharded;
    private final MemoryWire wire;
    private final PcapWriter pcap;
    private final java.util.List<UdpEchoService> peerUdpEcho = new java.util.ArrayList<>();
    private final java.util.List<TcpService> peerTcpServices = new java.util.ArrayList<>();
    /** Each shard's services, by shard index. */
    private final java.util.List<java.util.List<UdpEchoService>> udpEcho = new java.util.ArrayList<>();
    private final java.util.List<java.util.List<TcpService>> tcpServices = new java.util.ArrayList<>();

    Network(NetStack stack, NetStack peer, MemoryWire wire, PcapWriter pcap) {
        this(stack, null, peer, wire, pcap);
    }

    /** A sharded stack's network ({@code sharded} null for one stack). */
    Network(NetStack stack, dev.tern.stack.StackShards sharded, NetStack peer, MemoryWire wire, PcapWriter pcap) {
        this.stack = sharded == null ? stack : sharded.shard(0);
        this.sharded = sharded;
        this.shards = sharded == null ? java.util.List.of(stack) : sharded.shards();
        this.peer = peer;
        this.wire = wire;
        this.pcap = pcap;
        for (int k = 0; k < shards.size(); k++) {
            udpEcho.add(new java.util.ArrayList<>());
            tcpServices.add(new java.util.ArrayList<>());
        }
        if (peer != null) {
            try {
                peerUdpEcho.add(new UdpEchoService(peer, PEER_ECHO_PORT));
                peerTcpServices.add(new TcpService.Echo(peer, PEER_ECHO_PORT));
                peerTcpServices.add(new TcpService.Discard(peer, PEER_DISCARD_PORT));
            } catch (dev.tern.stack.TernSocketException e) {
                throw new CommandFailure("memory peer: cannot start its services: " + e.getMessage(), e);
            }
        }
    }

    /** A TCP service for one shard (each shard listens on the port itself). */
    @FunctionalInterface
    interface ServiceFactory {
        TcpService open(NetStack shard) throws dev.tern.stack.TernSocketException;
    }

    /**
     * Runs UDP echo on {@code port} of the command's own stack (tern serve --udp-echo): on every shard, since the
     * link steers each peer's datagrams to one of them (fragmented ones to shard 0, which hands each reassembled
     * datagram to the same shard).
     */
    void serveUdpEcho(int port) {
        try {
            for (int k = 0; k < shards.size(); k++) {
                udpEcho.get(k).add(new UdpEchoService(shards.get(k), port));
            }
        } catch (dev.tern.stack.TernSocketException e) {
            throw new CommandFailure("udp echo on port " + port + ": " + e.getMessage(), e);
        }
    }

    /** Runs a TCP service on the command's own stack, shard 0 only. */
    void serve(TcpService service) {
        tcpServices.getFirst().add(service);
    }

    /** Runs a TCP service on every shard (tern serve --echo, --discard, --http): each shard accepts what reaches it. */
    void serveOnEveryShard(ServiceFactory factory) throws dev.tern.stack.TernSocketException {
        for (int k = 0; k < shards.size(); k++) {
            tcpServices.get(k).add(factory.open(shards.get(k)));
        }
    }

    int shardCount() {
        return shards.size();
    }

    /** One turn of every stack's loop and every service; returns the work done. */
    int poll() {
        int work = 0;
        for (int k = 0; k < shards.size(); k++) {
            work += pollShard(k);
        }
        return work;
    }

    /** One turn of shard {@code k}'s loop and its services (with shard 0: the memory peer and its services too). */
    int pollShard(int k) {
        // Indexed loops: a for-each's iterator was not always scalar-replaced here, and this runs every poll.
        int work = shards.get(k).doWork();
        if (k == 0 && peer != null) {
            work += peer.doWork();
            for (int i = 0; i < peerUdpEcho.size(); i++) {
                work += peerUdpEcho.get(i).poll();
            }
            for (int i = 0; i < peerTcpServices.size(); i++) {
                work += peerTcpServices.get(i).poll();
            }
        }
        final java.util.List<UdpEchoService> udpServices = udpEcho.get(k);
        for (int i = 0; i < udpServices.size(); i++) {
            work += udpServices.get(i).poll();
        }
        final java.util.List<TcpService> services = tcpServices.get(k);
        for (int i = 0; i < services.size(); i++) {
            work += services.get(i).poll();
        }
        return work;
    }

    @Override
    public void close() {
        for (java.util.List<UdpEchoService> services : udpEcho) {
            services.forEach(UdpEchoService::close);
        }
        for (java.util.List<TcpService> services : tcpServices) {
            services.forEach(TcpService::close);
        }
        peerUdpEcho.forEach(UdpEchoService::close);
        peerTcpServices.forEach(TcpService::close);
        if (sharded != null) {
            sharded.close();
        } else {
            stack.close();
        }
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
