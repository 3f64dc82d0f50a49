import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SERVED_ICONS } from '../../../src/contract/service-identity.ts';
import { projectPath } from '../../../src/util/project-file.ts';
import { parseXml, type XmlElement } from '../../helpers/xml.ts';

/**
 * The committed icon files (src/web/assets/icons/), as service-identity.ts declares them: each
 * PNG is a PNG of its declared size with an alpha channel (scripts/render-icons.ts renders them on
 * a transparent background), and the SVG is a small, self-contained drawing.
 */
const fileOf = (iconPath: string) => readFileSync(projectPath(`src/web/assets/icons/${path.posix.basename(iconPath)}`));

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The IHDR chunk, which the PNG format puts first: width, height, bit depth, colour type. */
function ihdr(png: Buffer): { width: number; height: number; bitDepth: number; colorType: number } {
  expect(png.subarray(0, 8).equals(PNG_SIGNATURE), 'PNG signature').toBe(true);
  expect(png.readUInt32BE(8), 'IHDR length').toBe(13);
  expect(png.subarray(12, 16).toString('latin1')).toBe('IHDR');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20), bitDepth: png[24]!, colorType: png[25]! };
}

function elements(root: XmlElement): XmlElement[] {
  return [root, ...root.children.flatMap(elements)];
}

describe('the icon files', () => {
  const pngs = SERVED_ICONS.filter((i) => i.mimeType === 'image/png');

  it('lists the SVG and three PNG sizes', () => {
    expect(SERVED_ICONS.map((i) => i.path)).toEqual(['/icon.svg', '/icons/icon-48.png', '/icons/icon-192.png', '/icons/icon-512.png']);
  });

  for (const icon of pngs) {
    it(`${icon.path}: its IHDR width and height are its declared size, with an alpha channel`, () => {
      const [declared] = icon.sizes;
      const header = ihdr(fileOf(icon.path));
      expect(`${header.width}x${header.height}`).toBe(declared);
      // 6: truecolour with alpha; 8 bits a channel.
      expect({ colorType: header.colorType, bitDepth: header.bitDepth }).toEqual({ colorType: 6, bitDepth: 8 });
    });
  }

  it('the SVG is well-formed XML, square, under 2 KB, with no script, style sheet, text or outside reference', () => {
    const bytes = fileOf('/icon.svg');
    expect(bytes.length).toBeLessThan(2048);
    const root = parseXml(bytes.toString('utf8'));
    expect(root).toMatchObject({ name: 'svg', ns: 'http://www.w3.org/2000/svg' });
    const [, , w, h] = (root.attrs.viewBox ?? '').split(/\s+/).map(Number);
    expect(w).toBeGreaterThan(0);
    expect(w).toBe(h);
    const all = elements(root);
    for (const el of all) {
      expect(['script', 'style', 'text', 'image', 'use', 'foreignObject', 'a']).not.toContain(el.name);
      for (const [name, value] of Object.entries(el.attrs)) {
        expect(name, `<${el.name} ${name}>`).not.toMatch(/^on|href$/i);
        expect(value, `<${el.name} ${name}="${value}">`).not.toMatch(/url\(|javascript:|data:|https?:/i);
      }
    }
    expect(bytes.toString('utf8')).not.toMatch(/<!DOCTYPE|<!ENTITY|<\?xml-stylesheet/i);
  });
});
