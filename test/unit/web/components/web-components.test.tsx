import type { VNode } from 'preact';
import { renderToString } from 'preact-render-to-string';
import { describe, expect, it } from 'vitest';
import { Card } from '../../../../src/web/components/card.tsx';
import { DataTable, type Column } from '../../../../src/web/components/data-table.tsx';
import { Button, Checkbox, ErrorSummary, Field, Form, LinkButton, Select, TextArea } from '../../../../src/web/components/forms.tsx';
import { Notice } from '../../../../src/web/components/notice.tsx';
import { STATUS_LABELS, StatusBadge, type ListingStatus } from '../../../../src/web/components/status-badge.tsx';
import { Page, type Session } from '../../../../src/web/components/layout.tsx';
import { renderPage } from '../../../../src/http/html.ts';
import { siteStylesheet } from '../../../../src/web/stylesheet.ts';
import { parsePage } from '../../../helpers/html.ts';

const parse = (node: VNode) => parsePage(renderToString(node));

describe('Page', () => {
  const header = (session: Session | null) => {
    const doc = parsePage(renderPage(<Page title="Dashboard" session={session} />));
    const headerEl = doc.all('header')[0]!;
    return {
      doc,
      links: doc.all('a', headerEl).map((a) => [doc.text(a), doc.attr(a, 'href')]),
      forms: doc.all('form', headerEl),
    };
  };

  it('is a whole document: doctype, language, title with the site name, the hashed stylesheet and no script', () => {
    const html = renderPage(<Page title="Edit Pixel Forge" session={null} />);
    expect(html.startsWith('<!doctype html><html lang="en">')).toBe(true);
    const doc = parsePage(html);
    expect(doc.texts('title')).toEqual(['Edit Pixel Forge · Product directory']);
    const sheets = doc.all('link').filter((l) => doc.attr(l, 'rel') === 'stylesheet');
    expect(sheets.map((l) => doc.attr(l, 'href'))).toEqual([siteStylesheet().href]);
    expect(doc.all('script')).toEqual([]);
    expect(doc.all('style')).toEqual([]);
    expect(html).not.toMatch(/\sstyle=|\son[a-z]+=/i);
    expect(doc.byId('main')?.name).toBe('main');
  });

  it('offers sign-in to a visitor', () => {
    const { links, forms } = header(null);
    expect(links).toEqual([
      ['Product directory', '/'],
      ['Categories', '/#categories'],
      ['API', '/api/v1/docs'],
      ['Sign in', '/signin'],
    ]);
    // The one form is the search box: a GET to the search page, which needs no token.
    expect(forms).toHaveLength(1);
    const doc = header(null).doc;
    const search = forms[0]!;
    expect([doc.attr(search, 'method'), doc.attr(search, 'action'), doc.attr(search, 'role')]).toEqual(['get', '/search', 'search']);
    expect(doc.all('input', search).map((i) => [doc.attr(i, 'type'), doc.attr(i, 'name')])).toEqual([['search', 'q']]);
    expect(doc.all('input', search).map((i) => doc.attr(i, 'name'))).not.toContain('_csrf');
  });

  it("shows a maker's links and a Sign out form carrying the CSRF token; Review and Keys only to admins", () => {
    const maker = header({ email: 'ada@example.com', csrfToken: 'tok-123' });
    expect(maker.links.slice(3)).toEqual([
      ['Dashboard', '/dashboard'],
      ['Connected apps', '/settings/apps'],
    ]);
    expect(maker.doc.texts('header')[0]).toContain('ada@example.com');
    // The search box, then Sign out.
    expect(maker.forms).toHaveLength(2);
    const form = maker.forms[1]!;
    expect(maker.doc.attr(form, 'method')).toBe('post');
    expect(maker.doc.attr(form, 'action')).toBe('/signout');
    const inputs = maker.doc.all('input', form);
    expect(inputs.map((i) => [maker.doc.attr(i, 'type'), maker.doc.attr(i, 'name'), maker.doc.attr(i, 'value')])).toEqual([['hidden', '_csrf', 'tok-123']]);
    expect(maker.doc.texts('button')).toEqual(['Search', 'Sign out']);

    const admin = header({ email: 'root@example.com', csrfToken: 't', isAdmin: true });
    expect(admin.links.slice(3)).toEqual([
      ['Dashboard', '/dashboard'],
      ['Connected apps', '/settings/apps'],
      ['Review', '/admin/review'],
      ['Keys', '/admin/keys'],
    ]);
  });

  it('marks the current section and shows a flash notice of each kind above the content', () => {
    const doc = parsePage(
      renderPage(
        <Page title="Dashboard" nav="dashboard" session={{ email: 'a@example.com', csrfToken: 't' }} notice={{ kind: 'success', message: 'Saved <b>' }}>
          <p>content</p>
        </Page>,
      ),
    );
    const current = doc.all('a').filter((a) => doc.attr(a, 'aria-current') === 'page');
    expect(current.map((a) => doc.text(a))).toEqual(['Dashboard']);
    const notice = doc.all('div').find((d) => doc.attr(d, 'class')?.includes('notice'))!;
    expect(doc.attr(notice, 'class')).toBe('notice notice-success');
    expect(doc.attr(notice, 'role')).toBe('status');
    expect(doc.text(notice)).toBe('Saved <b>');
    const error = parse(<Notice kind="error" message="Link expired" />);
    expect(error.attr(error.all('div')[0]!, 'role')).toBe('alert');
    expect(error.attr(error.all('div')[0]!, 'class')).toBe('notice notice-error');
    const info = parse(<Notice kind="info" message="x" />);
    expect(info.attr(info.all('div')[0]!, 'class')).toBe('notice notice-info');
  });
});

describe('Form', () => {
  it('a POST form always carries the CSRF token as _csrf', () => {
    const doc = parse(
      <Form action="/listings/1" csrfToken={'a"b<c'}>
        <Button>Save</Button>
      </Form>,
    );
    const form = doc.all('form')[0]!;
    expect(doc.attr(form, 'method')).toBe('post');
    expect(doc.attr(form, 'action')).toBe('/listings/1');
    const hidden = doc.all('input')[0]!;
    expect([doc.attr(hidden, 'type'), doc.attr(hidden, 'name'), doc.attr(hidden, 'value')]).toEqual(['hidden', '_csrf', 'a"b<c']);
  });

  it('a GET form carries no token, which would leak through URLs', () => {
    const doc = parse(
      <Form action="/admin/review" method="get">
        <Field label="Search" name="q" type="search" />
      </Form>,
    );
    expect(doc.attr(doc.all('form')[0]!, 'method')).toBe('get');
    expect(doc.all('input').map((i) => doc.attr(i, 'name'))).toEqual(['q']);
  });
});

describe('fields', () => {
  it('a field is labelled, keeps its value and limits, and marks itself optional', () => {
    const doc = parse(<Field label="Name" name="name" value={'Pixel "Forge"'} maxLength={60} hint="As shown in the directory" />);
    const input = doc.all('input')[0]!;
    const label = doc.all('label')[0]!;
    expect(doc.attr(label, 'for')).toBe('field-name');
    expect(doc.attr(input, 'id')).toBe('field-name');
    expect(doc.attr(input, 'value')).toBe('Pixel "Forge"');
    expect(doc.attr(input, 'maxlength')).toBe('60');
    expect(doc.attr(input, 'type')).toBe('text');
    expect(doc.attr(input, 'aria-invalid')).toBeUndefined();
    expect(doc.attr(input, 'aria-describedby')).toBe('field-name-hint');
    expect(doc.text(label)).toBe('Name (optional)');
    const required = parse(<Field label="E-mail" name="email" type="email" required autocomplete="email" />);
    expect(required.attr(required.all('input')[0]!, 'required')).toBe('');
    expect(required.texts('label')).toEqual(['E-mail']);
    expect(required.attr(required.all('input')[0]!, 'aria-describedby')).toBeUndefined();
  });

  it('a refused field says so to assistive technology: aria-invalid and the message among its descriptions', () => {
    const doc = parse(<Field label="Website" name="website" type="url" value="ftp://x" hint="https only" error="Enter an https address" required />);
    const input = doc.all('input')[0]!;
    expect(doc.attr(input, 'aria-invalid')).toBe('true');
    const ids = doc.attr(input, 'aria-describedby')!.split(' ');
    expect(ids).toEqual(['field-website-hint', 'field-website-error']);
    expect(doc.text(doc.byId('field-website-error')!)).toBe('Error: Enter an https address');
    expect(doc.text(doc.byId('field-website-hint')!)).toBe('https only');
    expect(doc.attr(doc.all('div')[0]!, 'class')).toBe('field field-error');
  });

  it('a text area shows its value as text and is wired like a field', () => {
    const doc = parse(<TextArea label="Description" name="description" value={'<p>hi</p> & more'} error="Too long" maxLength={5000} />);
    const area = doc.all('textarea')[0]!;
    expect(doc.text(area)).toBe('<p>hi</p> & more');
    expect(doc.attr(area, 'aria-invalid')).toBe('true');
    expect(doc.attr(area, 'aria-describedby')).toBe('field-description-error');
    expect(doc.attr(area, 'maxlength')).toBe('5000');
  });

  it('a select marks the chosen option, with an optional empty first choice', () => {
    const options = [
      { value: 'design', label: 'Design' },
      { value: 'developer-tools', label: 'Developer Tools' },
    ];
    const doc = parse(<Select label="Category" name="category" options={options} value="developer-tools" emptyOption="Choose a category" required />);
    const opts = doc.all('option');
    expect(opts.map((o) => [doc.attr(o, 'value'), doc.text(o), doc.attr(o, 'selected') !== undefined])).toEqual([
      ['', 'Choose a category', false],
      ['design', 'Design', false],
      ['developer-tools', 'Developer Tools', true],
    ]);
    const fresh = parse(<Select label="Category" name="category" options={options} emptyOption="Choose a category" error="Choose one" />);
    expect(fresh.all('option').filter((o) => fresh.attr(o, 'selected') !== undefined).map((o) => fresh.attr(o, 'value'))).toEqual(['']);
    expect(fresh.attr(fresh.all('select')[0]!, 'aria-invalid')).toBe('true');
  });

  it('a checkbox is labelled and keeps its state', () => {
    const doc = parse(<Checkbox label="I own this product" name="owner" checked hint="We check the site" />);
    const box = doc.all('input')[0]!;
    expect(doc.attr(box, 'type')).toBe('checkbox');
    expect(doc.attr(box, 'checked')).toBe('');
    expect(doc.attr(doc.all('label')[0]!, 'for')).toBe(doc.attr(box, 'id'));
    expect(doc.attr(box, 'aria-describedby')).toBe('field-owner-hint');
  });
});

describe('ErrorSummary', () => {
  it('lists the form error first, then each field error linking to its field', () => {
    const doc = parse(<ErrorSummary errors={{ name: 'Enter a name', website: 'Enter an https address' }} formError="Nothing was saved" />);
    const box = doc.all('div')[0]!;
    expect(doc.attr(box, 'role')).toBe('alert');
    expect(doc.texts('h2')).toEqual(['There is a problem']);
    expect(doc.texts('li')).toEqual(['Nothing was saved', 'Enter a name', 'Enter an https address']);
    expect(doc.all('a').map((a) => doc.attr(a, 'href'))).toEqual(['#field-name', '#field-website']);
    // The links land on the fields as Field renders them.
    const field = parse(<Field label="Name" name="name" />);
    expect(field.attr(field.all('input')[0]!, 'id')).toBe('field-name');
  });

  it('renders nothing when there is nothing to fix', () => {
    expect(renderToString(<ErrorSummary errors={{}} />)).toBe('');
  });
});

describe('buttons, cards and badges', () => {
  it('buttons submit by default and take their variant as a class', () => {
    const doc = parse(
      <div>
        <Button>Save</Button>
        <Button variant="danger" name="decision" value="reject">
          Reject
        </Button>
        <Button variant="secondary" type="button">
          Cancel
        </Button>
        <LinkButton href="/listings/1/edit">Edit</LinkButton>
      </div>,
    );
    const buttons = doc.all('button');
    expect(buttons.map((b) => [doc.attr(b, 'type'), doc.attr(b, 'class')])).toEqual([
      ['submit', 'button'],
      ['submit', 'button button-danger'],
      ['button', 'button button-secondary'],
    ]);
    expect([doc.attr(buttons[1]!, 'name'), doc.attr(buttons[1]!, 'value')]).toEqual(['decision', 'reject']);
    const link = doc.all('a')[0]!;
    expect([doc.attr(link, 'href'), doc.attr(link, 'class')]).toEqual(['/listings/1/edit', 'button button-secondary']);
  });

  it('a card has an optional heading', () => {
    const doc = parse(
      <Card title="Pixel Forge" id="listing-1">
        <p>body</p>
      </Card>,
    );
    expect(doc.attr(doc.all('section')[0]!, 'class')).toBe('card');
    expect(doc.attr(doc.all('section')[0]!, 'id')).toBe('listing-1');
    expect(doc.texts('h2')).toEqual(['Pixel Forge']);
    expect(parse(<Card>x</Card>).all('h2')).toEqual([]);
  });

  it('every listing state has words and a class the stylesheet styles', () => {
    const css = siteStylesheet().body.toString('utf8');
    const states = Object.keys(STATUS_LABELS) as ListingStatus[];
    expect(states.sort()).toEqual(['changes_requested', 'draft', 'hidden', 'live', 'pending', 'rejected']);
    for (const status of states) {
      const doc = parse(<StatusBadge status={status} />);
      const badge = doc.all('span')[0]!;
      expect(doc.text(badge)).toBe(STATUS_LABELS[status]);
      expect(doc.attr(badge, 'class')).toBe(`badge badge-${status}`);
      expect(css).toContain(`.badge-${status} {`);
    }
  });
});

describe('DataTable', () => {
  const columns: Column<{ name: string; note: string | null }>[] = [
    { header: 'Name', cell: (r) => <strong>{r.name}</strong> },
    { header: 'Note', cell: (r) => r.note ?? <span class="muted">none</span>, class: 'feedback' },
  ];

  it('heads each column for screen readers and shows a row per record, text escaped', () => {
    const doc = parse(<DataTable class="table" columns={columns} rows={[{ name: 'A <b>', note: 'x' }, { name: 'B', note: null }]} />);
    const table = doc.all('table')[0]!;
    expect(doc.attr(table, 'class')).toBe('table');
    expect(doc.all('th').map((th) => [doc.text(th), doc.attr(th, 'scope')])).toEqual([
      ['Name', 'col'],
      ['Note', 'col'],
    ]);
    expect(doc.all('tr', doc.all('tbody')[0]!)).toHaveLength(2);
    expect(doc.texts('td')).toEqual(['A <b>', 'x', 'B', 'none']);
    expect(doc.all('td').map((td) => doc.attr(td, 'class'))).toEqual([undefined, 'feedback', undefined, 'feedback']);
    expect(doc.all('div')).toEqual([]);
  });

  it('scrolls sideways inside a table-wrap when asked', () => {
    const doc = parse(<DataTable wrap columns={columns} rows={[]} />);
    const wrap = doc.all('div')[0]!;
    expect(doc.attr(wrap, 'class')).toBe('table-wrap');
    expect(doc.all('table', wrap)).toHaveLength(1);
    expect(doc.all('td')).toEqual([]);
  });
});
