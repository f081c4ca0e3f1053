package dev.tern.testkit.netns;

import dev.tern.core.testing.ExternalTools;

/**
 * Builds a {@link NetnsHarness} for a test, or skips the test with the reason when this machine cannot (not root,
 * no iproute2), except under CI ({@code TERN_REQUIRE_NETNS=1}), where a missing capability is a failure.
 */
public final class NetnsTesting {
    private NetnsTesting() {
    }

    public static void assumeNetns() {
        NetnsHarness.unavailableReason().ifPresent(ExternalTools::skip);
    }

    public static NetnsHarness harness(NetnsHarness.Options options) {
        assumeNetns();
        if (options.ternOffloads() != null || options.peerOffloads() != null) {
            ExternalTools.require("ethtool", "ethtool");
        }
        return NetnsHarness.create(options);
    }

    public static NetnsHarness harness() {
        return harness(NetnsHarness.Options.defaults());
    }
}
