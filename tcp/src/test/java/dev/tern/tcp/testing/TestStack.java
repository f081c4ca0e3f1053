package dev.tern.tcp.testing;

import dev.tern.arp.ArpConfig;
import dev.tern.arp.ArpLayer;
import dev.tern.core.counters.CountersFile;
import dev.tern.core.net.InterfaceAddress;
import dev.tern.core.time.Pollable;
import dev.tern.core.time.Timers;
import dev.tern.ethernet.EthernetLayer;
import dev.tern.ethernet.link.Link;
import dev.tern.ipv4.Ipv4Config;
import dev.tern.ipv4.Ipv4Layer;
import dev.tern.ipv6.Ipv6Config;
import dev.tern.ipv6.Ipv6Layer;
import dev.tern.tcp.TcpConfig;
import dev.tern.tcp.TcpLayer;

/**
 * One stack for TCP tests, assembled as {@code NetStack} does (tcp cannot depend on the stack module): Ethernet,
 * ARP, IPv4 and TCP on a {@link Link}, with the poll order NetStack will use once TCP is in it: receive a batch,
 * loopback, timers, TCP's output pass, flush.
 */
public final class TestStack implements Pollable, AutoCloseable {
    public final String name;
    public final Link link;
    public final CountersFile counters;
    public final Timers timers;
    public final EthernetLayer ethernet;
    public final ArpLayer arp;
    public final Ipv4Layer ipv4;
    public final TcpLayer tcp;
    /** Null unless made with an {@link Ipv6Config}. */
    public final Ipv6Layer ipv6;
    private final int receiveBatch;

    public TestStack(String name, Link link, String cidr, TcpConfig config, long nowNs) {
        this(name, link, cidr, config, nowNs, 64);
    }

    public TestStack(String name, Link link, String cidr, TcpConfig config, long nowNs, int receiveBatch) {
        this(name, link, cidr, config, Ipv4Config.DEFAULT, nowNs, receiveBatch);
    }

    public TestStack(String name, Link link, String cidr, TcpConfig config, Ipv4Config ipv4Config, long nowNs,
                     int receiveBatch) {
        this(name, link, cidr, config, ipv4Config, Ipv6Config.DISABLED, nowNs, receiveBatch);
    }

    /** A stack with IPv6 too when {@code ipv6Config} is enabled. */
    public TestStack(String name, Link link, String cidr, TcpConfig config, Ipv4Config ipv4Config,
                     Ipv6Config ipv6Config, long nowNs, int receiveBatch) {
        this.name = name;
        this.link = link;
        this.receiveBatch = receiveBatch;
        this.counters = CountersFile.inMemory(name, 512);
        this.timers = new Timers(nowNs);
        this.ethernet = new EthernetLayer(link, link.macAddress(), counters);
        this.arp = new ArpLayer(ethernet, timers, InterfaceAddress.parse(cidr), ArpConfig.DEFAULT, counters);
        this.ipv4 = new Ipv4Layer(ethernet, arp, timers, ipv4Config, counters);
        this.ipv6 = ipv6Config.enabled() ? new Ipv6Layer(ethernet, timers, ipv6Config, counters) : null;
        this.tcp = new TcpLayer(ipv4, ipv6, timers, config, counters);
        arp.start(nowNs);
        if (ipv6 != null) {
            ipv6.start(nowNs);
        }
    }

    public int address() {
        return ipv4.address().address();
    }

    /** One turn of the loop. */
    @Override
    public int poll(long nowNs) {
        int work = ethernet.holds().drainReleased(nowNs);
        work += ethernet.poll(nowNs, receiveBatch);
        work += ipv4.pollLoopback(nowNs);
        work += timers.poll(nowNs, 1024);
        work += tcp.poll(nowNs);
        ethernet.flush();
        return work;
    }

    /** When this stack next has something to do without input: its next timer or the link's next frame. */
    @Override
    public long pollAt() {
        return Math.min(timers.earliestDeadline(), link.nextArrivalNs());
    }

    public long counter(String label) {
        return counters.value(label);
    }

    @Override
    public void close() {
        link.close();
        tcp.close();
        if (ipv6 != null) {
            ipv6.close();
        }
        ipv4.close();
        arp.close();
        counters.close();
    }
}
