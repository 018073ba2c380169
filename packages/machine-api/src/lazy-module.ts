/**
 * A dependency imported the first time a feature uses it instead of at start-up. Node 20 has no compile
 * cache: every module loaded before the service listens costs start-up time and resident memory whether
 * or not the configuration needs it (a printer protocol nobody configured, mDNS when it is off). Type
 * imports of such a module stay static; only the value is loaded here.
 */
export class LazyModule<T> {
  private loading: Promise<T> | undefined;
  /** The module once loaded, for code that must stay synchronous after the first use. */
  loaded: T | undefined;

  constructor(private readonly load: () => Promise<T>) {}

  /** The module, importing it on the first call (later calls share that import). */
  get(): Promise<T> {
    this.loading ??= this.load().then((module) => {
      this.loaded = module;
      return module;
    });
    return this.loading;
  }
}
