/**
 * Where a parsed configuration came from. Kept beside the config object (in a WeakMap) so that the
 * typed config stays plain data; a copy of the object has no source.
 */
import type { PositionMap } from '../../config/positions.js';

/** The file a configuration was read from, and the position of every field in it. */
export interface ConfigSource {
  file: string;
  positions: PositionMap;
}

const sources = new WeakMap<object, ConfigSource>();

/** Remember where `config` came from. */
export function registerSource(config: object, source: ConfigSource): void {
  sources.set(config, source);
}

/** Where `config` came from, if it was parsed by this module. */
export function sourceOf(config: object): ConfigSource | undefined {
  return sources.get(config);
}
