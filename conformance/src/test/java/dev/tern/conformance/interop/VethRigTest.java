package dev.tern.conformance.interop;

import org.junit.jupiter.api.AfterEach;

/**
 * The base of the kernel interop tests: a test starts one {@link VethRig} into {@link #rig}, and it is closed after
 * the test whatever happened, so no namespace, interface or process outlives a failing test.
 */
abstract class VethRigTest {
    protected VethRig rig;

    @AfterEach
    final void closeRig() {
        if (rig != null) {
            rig.close();
            rig = null;
        }
    }
}
