import type { ComponentChildren } from 'preact';

/**
 * The building blocks of every form on the maker and admin pages. Forms are plain HTML posts:
 * they work without JavaScript, and the server answers an invalid submission with the same
 * page, the values kept, an ErrorSummary at the top and the message next to each field.
 *
 * A field's id is "field-" followed by its name unless given, so ErrorSummary links land on it.
 */

/** The name of the hidden field every POST form carries its CSRF token in. */
const CSRF_FIELD = '_csrf';

/** Field name → message, in the order the fields appear on the page. */
export type FieldErrors = Readonly<Record<string, string>>;

export function fieldId(name: string): string {
  return `field-${name}`;
}

type FormProps = {
  action: string;
  id?: string;
  class?: string;
  /** Names the form for assistive technology when a page holds several. */
  'aria-label'?: string;
  children?: ComponentChildren;
} & (
  | { method?: 'post'; csrfToken: string }
  /**
   * GET forms (search, filters) change nothing and carry no token: a token in a URL would end up
   * in logs, history and Referer headers.
   */
  | { method: 'get'; csrfToken?: never }
);

/** A form; a POST form always carries the CSRF token as the hidden `_csrf` field. */
export function Form(props: FormProps) {
  const method = props.method ?? 'post';
  return (
    <form action={props.action} method={method} id={props.id} class={props.class} aria-label={props['aria-label']}>
      {props.csrfToken !== undefined && <input type="hidden" name={CSRF_FIELD} value={props.csrfToken} />}
      {props.children}
    </form>
  );
}

interface CommonFieldProps {
  label: string;
  name: string;
  /** The message shown when the submitted value was refused. */
  error?: string;
  /** Guidance shown under the label: a format, a limit, what the value is used for. */
  hint?: ComponentChildren;
  required?: boolean;
  id?: string;
}

/** The ids a control's aria-describedby names: its hint, then its error. */
function describedBy(id: string, hint: unknown, error: string | undefined): string | undefined {
  const ids = [hint !== undefined && hint !== null && hint !== '' ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean);
  return ids.length > 0 ? ids.join(' ') : undefined;
}

/** Label, hint and error message above a control, wired to it for assistive technology. */
function FieldFrame(props: CommonFieldProps & { id: string; children: ComponentChildren }) {
  const { id, label, hint, error, required } = props;
  return (
    <div class={error ? 'field field-error' : 'field'}>
      <label for={id}>
        {label}
        {!required && <span class="optional"> (optional)</span>}
      </label>
      {hint !== undefined && hint !== null && hint !== '' && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {error && (
        <p class="error-message" id={`${id}-error`}>
          <span class="visually-hidden">Error: </span>
          {error}
        </p>
      )}
      {props.children}
    </div>
  );
}

export interface FieldProps extends CommonFieldProps {
  value?: string | number | null;
  type?: 'text' | 'email' | 'url' | 'password' | 'number' | 'search' | 'tel' | 'date';
  maxLength?: number;
  minLength?: number;
  min?: number;
  max?: number;
  autocomplete?: string;
  placeholder?: string;
  readOnly?: boolean;
}

/** A one-line input. */
export function Field(props: FieldProps) {
  const id = props.id ?? fieldId(props.name);
  return (
    <FieldFrame {...props} id={id}>
      <input
        id={id}
        name={props.name}
        type={props.type ?? 'text'}
        value={props.value ?? undefined}
        required={props.required}
        maxLength={props.maxLength}
        minLength={props.minLength}
        min={props.min}
        max={props.max}
        autocomplete={props.autocomplete}
        placeholder={props.placeholder}
        readOnly={props.readOnly}
        aria-invalid={props.error ? 'true' : undefined}
        aria-describedby={describedBy(id, props.hint, props.error)}
      />
    </FieldFrame>
  );
}

export interface TextAreaProps extends CommonFieldProps {
  value?: string | null;
  rows?: number;
  maxLength?: number;
  minLength?: number;
  placeholder?: string;
}

/** A multi-line input. */
export function TextArea(props: TextAreaProps) {
  const id = props.id ?? fieldId(props.name);
  return (
    <FieldFrame {...props} id={id}>
      <textarea
        id={id}
        name={props.name}
        rows={props.rows ?? 6}
        required={props.required}
        maxLength={props.maxLength}
        minLength={props.minLength}
        placeholder={props.placeholder}
        aria-invalid={props.error ? 'true' : undefined}
        aria-describedby={describedBy(id, props.hint, props.error)}
        value={props.value ?? ''}
      />
    </FieldFrame>
  );
}

export interface SelectOption {
  value: string;
  label: string;
}

export interface SelectProps extends CommonFieldProps {
  options: readonly SelectOption[];
  /** The selected option's value. */
  value?: string | null;
  /** A first option with an empty value and this text ("Choose a category"). */
  emptyOption?: string;
}

/** A choice from a fixed list. */
export function Select(props: SelectProps) {
  const id = props.id ?? fieldId(props.name);
  const selected = props.value ?? '';
  return (
    <FieldFrame {...props} id={id}>
      <select
        id={id}
        name={props.name}
        required={props.required}
        aria-invalid={props.error ? 'true' : undefined}
        aria-describedby={describedBy(id, props.hint, props.error)}
      >
        {props.emptyOption !== undefined && (
          <option value="" selected={selected === ''}>
            {props.emptyOption}
          </option>
        )}
        {props.options.map((o) => (
          <option value={o.value} selected={o.value === selected}>
            {o.label}
          </option>
        ))}
      </select>
    </FieldFrame>
  );
}

export interface CheckboxProps {
  label: ComponentChildren;
  name: string;
  /** Sent when checked; default "on", as browsers do. */
  value?: string;
  checked?: boolean;
  hint?: ComponentChildren;
  error?: string;
  required?: boolean;
  id?: string;
}

/** One yes/no choice, the box before its label. */
export function Checkbox(props: CheckboxProps) {
  const id = props.id ?? fieldId(props.name);
  return (
    <div class={props.error ? 'field field-error' : 'field'}>
      {props.error && (
        <p class="error-message" id={`${id}-error`}>
          <span class="visually-hidden">Error: </span>
          {props.error}
        </p>
      )}
      <div class="checkbox">
        <input
          id={id}
          name={props.name}
          type="checkbox"
          value={props.value ?? 'on'}
          checked={props.checked}
          required={props.required}
          aria-invalid={props.error ? 'true' : undefined}
          aria-describedby={describedBy(id, props.hint, props.error)}
        />
        <div>
          <label for={id}>{props.label}</label>
          {props.hint !== undefined && props.hint !== null && props.hint !== '' && (
            <p class="hint" id={`${id}-hint`}>
              {props.hint}
            </p>
          )}
        </div>
      </div>
    </div>
  );
}

export type ButtonVariant = 'primary' | 'secondary' | 'danger' | 'link';

function buttonClass(variant: ButtonVariant): string {
  return variant === 'primary' ? 'button' : `button button-${variant}`;
}

export interface ButtonProps {
  variant?: ButtonVariant;
  type?: 'submit' | 'button' | 'reset';
  /** Sent with the form when this button submits it, so one form can offer several actions. */
  name?: string;
  value?: string;
  /** Submits the form to this path instead of its action (same origin only, as CSP requires). */
  formAction?: string;
  disabled?: boolean;
  children?: ComponentChildren;
}

export function Button({ variant = 'primary', type = 'submit', name, value, formAction, disabled, children }: ButtonProps) {
  return (
    <button type={type} class={buttonClass(variant)} name={name} value={value} formAction={formAction} disabled={disabled}>
      {children}
    </button>
  );
}

/** A link that looks like a button: for actions that only open another page ("Edit"). */
export function LinkButton({ href, variant = 'secondary', children }: { href: string; variant?: ButtonVariant; children?: ComponentChildren }) {
  return (
    <a href={href} class={buttonClass(variant)}>
      {children}
    </a>
  );
}

/** A row of buttons under a form. */
export function FormActions({ children }: { children?: ComponentChildren }) {
  return <div class="form-actions">{children}</div>;
}

export interface ErrorSummaryProps {
  errors: FieldErrors;
  /** A problem with the submission as a whole ("This link has expired"), listed first. */
  formError?: string;
  title?: string;
}

/**
 * The list of what to fix, at the top of a form that was sent back; each entry links to its
 * field. Renders nothing when there is nothing to fix.
 */
export function ErrorSummary({ errors, formError, title = 'There is a problem' }: ErrorSummaryProps) {
  const entries = Object.entries(errors);
  if (entries.length === 0 && !formError) return null;
  return (
    <div class="error-summary" role="alert" aria-labelledby="error-summary-title">
      <h2 id="error-summary-title">{title}</h2>
      <ul>
        {formError && <li>{formError}</li>}
        {entries.map(([name, message]) => (
          <li>
            <a href={`#${fieldId(name)}`}>{message}</a>
          </li>
        ))}
      </ul>
    </div>
  );
}
