package dev.tern.ethernet.link;

/**
 * A {@link Link} that hands every call to the link it wraps: the base of decorators (a capture tap, a test's fault
 * injector, a software segmentation stage), which override only what they change. Forwarding adds one virtual call
 * per method and no state.
 */
public abstract class ForwardingLink implements Link {
    /** The wrapped link. */
    protected final Link link;

    protected ForwardingLink(Link link) {
        this.link = link;
    }

    /** The wrapped link. */
    public final Link wrapped() {
        return link;
    }

    @Override
    public String name() {
        return link.name();
    }

    @Override
    public long macAddress() {
        return link.macAddress();
    }

    @Override
    public int mtu() {
        return link.mtu();
    }

    @Override
    public int offloads() {
        return link.offloads();
    }

    @Override
    public boolean receivePressure() {
        return link.receivePressure();
    }

    @Override
    public boolean wakeAwaitingThread() {
        return link.wakeAwaitingThread();
    }

    @Override
    public ShardRule shardRule() {
        return link.shardRule();
    }

    @Override
    public boolean awaitFrames(int timeoutMs) {
        return link.awaitFrames(timeoutMs);
    }

    @Override
    public boolean canAwaitFrames() {
        return link.canAwaitFrames();
    }

    @Override
    public boolean shedUnsolicitedSyns(boolean shed) {
        return link.shedUnsolicitedSyns(shed);
    }

    @Override
    public boolean shedSynsFrom(int[] sources, int count) {
        return link.shedSynsFrom(sources, count);
    }

    @Override
    public int receive(FrameHandler handler, int maxFrames) {
        return link.receive(handler, maxFrames);
    }

    @Override
    public boolean claim(TxFrame frame) {
        return link.claim(frame);
    }

    @Override
    public void commit(TxFrame frame) {
        link.commit(frame);
    }

    @Override
    public void abort(TxFrame frame) {
        link.abort(frame);
    }

    @Override
    public int flush() {
        return link.flush();
    }

    @Override
    public void addMulticast(long mac) {
        link.addMulticast(mac);
    }

    @Override
    public void removeMulticast(long mac) {
        link.removeMulticast(mac);
    }

    @Override
    public void addIpv6Address(long high, long low) {
        link.addIpv6Address(high, low);
    }

    @Override
    public void removeIpv6Address(long high, long low) {
        link.removeIpv6Address(high, low);
    }

    @Override
    public boolean sharesInterfaceWithKernel() {
        return link.sharesInterfaceWithKernel();
    }

    @Override
    public int lendFrame(java.lang.foreign.MemorySegment segment, long offset) {
        return link.lendFrame(segment, offset);
    }

    @Override
    public void returnFrame(int lease) {
        link.returnFrame(lease);
    }

    @Override
    public long nextArrivalNs() {
        return link.nextArrivalNs();
    }

    @Override
    public String[] statisticNames() {
        return link.statisticNames();
    }

    @Override
    public void statistics(long[] values) {
        link.statistics(values);
    }

    @Override
    public void close() {
        link.close();
    }
}
