/**
 * The congestion-control lab: real Tern stacks in a dumbbell through one {@link dev.tern.lab.link.Bottleneck} on
 * virtual time, scenario files, and the metrics {@code tern lab} prints (docs/LAB.md).
 */
package dev.tern.lab;
