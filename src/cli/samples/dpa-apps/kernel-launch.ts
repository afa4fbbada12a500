/** The DPA side of `softdpu sample dpa_wait_kernel_launch` (NVIDIA's dpa_kernel_launch_kernels_dev.c). */
import * as dev from 'softdpu/dpa-dev';

/** Kernel: says hello in the host's log. */
export function hello_world(): void {
  dev.log(dev.DevLogLevel.INFO, 'Hello from kernel');
}
