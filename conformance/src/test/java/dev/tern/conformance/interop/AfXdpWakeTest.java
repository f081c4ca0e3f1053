package dev.tern.conformance.interop;

import dev.tern.afxdp.AfXdpLink;
import dev.tern.afxdp.AfXdpOptions;
import dev.tern.core.testing.WakeChecks;
import dev.tern.testkit.netns.NetnsHarness;
import dev.tern.testkit.netns.NetnsTesting;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static dev.tern.testkit.netns.NetnsHarness.TERN_IPV4;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * An AF_XDP link's owner asleep in {@code awaitFrames} is woken by another thread ({@code wakeAwaitingThread}, an
 * event counter polled beside the socket), as a shard is when another shard hands it a frame; before, it slept out
 * its wait (up to a millisecond in a stack's idle strategy). Needs root and veth in namespaces the test makes; skipped
 * otherwise (failed under CI).
 */
class AfXdpWakeTest {
    private NetnsHarness net;
    private AfXdpLink link;

    @AfterEach
    void tearDown() {
        VethRig.closeInOrder(link, net);
    }

    @Test
    void aWakeFromAnotherThreadEndsAWaitForFramesAtOnceAndIsTakenOnce() throws Exception {
        NetnsTesting.assumeNetns();
        net = NetnsHarness.create(VethSetup.DEFAULT.harnessOptions());
        link = net.ternNamespace().call(() -> AfXdpLink.open(NetnsHarness.TERN_INTERFACE, AfXdpOptions.forAddress(TERN_IPV4)));
        WakeChecks.aWakeEndsAWaitAndIsTakenOnce(link::awaitFrames, link::wakeAwaitingThread);
        final String[] names = link.statisticNames();
        final long[] values = new long[names.length];
        link.statistics(values);
        assertEquals(1, values[Arrays.asList(names).indexOf("afxdp.rx.woken")]);

        link.close();
        assertFalse(link.wakeAwaitingThread(), "a closed link's counter is not written");
    }
}
