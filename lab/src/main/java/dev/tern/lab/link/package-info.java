/** The bottleneck link of the lab: rate, queue, disciplines (drop-tail, CoDel), random loss and outages. */
package dev.tern.lab.link;
