/**
 * A DPA application (`struct doca_dpa_app`): an ES module whose named function exports are its kernels,
 * thread functions and RPC functions, as `dpacc` builds one from `__dpa_global__` and `__dpa_rpc__`
 * functions. It is not loaded here: each execution unit of a DPA that runs it imports it (dpa.ts).
 */
import { statSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DocaError, describeValue } from '../core/error.js';

/**
 * A DPA application, `struct doca_dpa_app` (what `dpacc` builds, and `doca_dpa_set_app` takes): here an ES
 * module whose named function exports are its kernels, thread functions and RPC functions. It is not
 * loaded here: each execution unit of a DPA that runs it imports it.
 *
 * @example
 * ```ts
 * // extern struct doca_dpa_app *hello_app; doca_dpa_set_app(dpa, hello_app)
 * const app = DpaApp.create(new URL('./hello.js', import.meta.url));
 * dpa.setApp(app);
 * dpa.start(); // the execution units import hello.js
 * console.log(dpa.rpc(app.func('add'), 40n, 2n)); // 42n
 * ```
 */
export class DpaApp {
  private constructor(
    /** The module's file URL. */
    readonly url: string,
    private readonly appName: string,
  ) {}

  /**
   * A DPA application from an ES module, given as a file URL or a path (relative paths from the current
   * directory): a compiled TypeScript module or plain JavaScript. NOT_FOUND if there is no such file.
   */
  static create(module: string | URL): DpaApp {
    const call = 'DpaApp.create';
    let url: URL;
    if (module instanceof URL) url = module;
    else if (typeof module === 'string' && module.startsWith('file:')) url = new URL(module);
    else if (typeof module === 'string' && module.length > 0) url = pathToFileURL(resolve(module));
    else throw new DocaError('INVALID_VALUE', call, `expected a file URL or a path of an ES module, got ${describeValue(module)}`);
    if (url.protocol !== 'file:') throw new DocaError('INVALID_VALUE', call, `${url.href} is not a file URL`);
    const path = fileURLToPath(url);
    try {
      if (!statSync(path).isFile()) throw new Error('not a file');
    } catch {
      throw new DocaError('NOT_FOUND', call, `there is no DPA application module at ${path}`);
    }
    return new DpaApp(url.href, basename(path).replace(/\.[cm]?js$/, ''));
  }

  /** `doca_dpa_app_get_name`: the module's file name without its extension. */
  getName(): string {
    return this.appName;
  }

  /** The function exported as `name` (`extern doca_dpa_func_t name;`); checked when a started DPA uses it. */
  func(name: string): DpaFunc {
    if (typeof name !== 'string' || name.length === 0) throw new DocaError('INVALID_VALUE', 'DpaApp.func', `expected an export name, got ${describeValue(name)}`);
    return new DpaFunc(this, name);
  }
}

/**
 * A function of a DPA application (`doca_dpa_func_t *`, DOCA's `&func` of a `__dpa_global__` or
 * `__dpa_rpc__` function); plain export names are accepted wherever one is.
 *
 * @example
 * ```ts
 * // doca_dpa_kernel_launch_update_add(dpa, NULL, 0, done, 1, 8, &hello, arg)
 * const hello = app.func('hello');
 * dpa.kernelLaunchUpdateAdd(undefined, 0, done, 1n, 8, hello, arg); // or 'hello'
 * ```
 */
export class DpaFunc {
  constructor(
    readonly app: DpaApp,
    readonly name: string,
  ) {}
}

/** A DPA function as the `Dpa` calls take it: a `DpaFunc`, or the name the application exports it under. */
export type DpaFuncRef = DpaFunc | string;
