/**
 * Words the demo catalog is written with. Each category brings its own kinds of product,
 * actions, features, audiences and tags, so a search for "invoices" or "deployments" finds the
 * listings of a few categories and not the whole catalog.
 */

export interface DemoCategory {
  slug: string;
  name: string;
  noun: string;
  productType: 'software' | 'digital_product';
  /** What a product of this category is, e.g. "deployment dashboard". */
  kinds: readonly string[];
  /** What it lets you do, lowercase, starting with a verb. */
  actions: readonly string[];
  /** What it offers, lowercase noun phrases. */
  features: readonly string[];
  audiences: readonly string[];
  tags: readonly string[];
  /** Second words for product names ("Pixel Forge"). */
  nameWords: readonly string[];
}

export const DEMO_CATEGORIES: readonly DemoCategory[] = [
  {
    slug: 'developer-tools', name: 'Developer Tools', noun: 'tools', productType: 'software',
    kinds: ['command-line tool', 'API client', 'code review assistant', 'local development environment', 'debugging companion'],
    actions: ['review pull requests', 'debug production issues', 'mock APIs locally', 'generate typed API clients', 'profile slow endpoints'],
    features: ['inline code suggestions', 'request history with diffing', 'a plugin system for custom linters', 'one-command local environments', 'readable stack traces'],
    audiences: ['backend engineers', 'frontend developers', 'open-source maintainers', 'platform teams'],
    tags: ['api', 'cli', 'code-review', 'debugging', 'typescript', 'testing', 'git'],
    nameWords: ['Commit', 'Shell', 'Debug', 'Build', 'Compile', 'Patch', 'Lint', 'Merge'],
  },
  {
    slug: 'design', name: 'Design', noun: 'resources', productType: 'software',
    kinds: ['design tool', 'prototyping app', 'icon library', 'color palette generator', 'mockup editor'],
    actions: ['prototype interactive flows', 'build consistent design systems', 'hand off designs to developers', 'generate accessible color palettes'],
    features: ['vector editing in the browser', 'shared component libraries', 'contrast checks on every layer', 'export to CSS and SVG', 'live multiplayer cursors'],
    audiences: ['product designers', 'brand designers', 'indie makers', 'design agencies'],
    tags: ['figma', 'prototyping', 'icons', 'colors', 'typography', 'design-systems', 'illustration'],
    nameWords: ['Canvas', 'Palette', 'Pixel', 'Sketch', 'Frame', 'Hue', 'Layer', 'Vector'],
  },
  {
    slug: 'productivity', name: 'Productivity', noun: 'apps', productType: 'software',
    kinds: ['task manager', 'daily planner', 'focus timer', 'note-taking app', 'calendar assistant'],
    actions: ['plan the week in ten minutes', 'turn notes into tasks', 'block distracting sites', 'schedule deep work'],
    features: ['natural-language task entry', 'a calm daily agenda', 'keyboard shortcuts for everything', 'offline sync across devices', 'recurring routines'],
    audiences: ['freelancers', 'students', 'busy founders', 'knowledge workers'],
    tags: ['tasks', 'notes', 'calendar', 'focus', 'habits', 'time-tracking'],
    nameWords: ['Focus', 'Agenda', 'Todo', 'Planner', 'Day', 'Notes', 'Habit', 'Routine'],
  },
  {
    slug: 'marketing', name: 'Marketing', noun: 'tools', productType: 'software',
    kinds: ['campaign planner', 'landing page builder', 'referral program tool', 'marketing calendar'],
    actions: ['launch campaigns across channels', 'build landing pages that convert', 'run referral programs', 'measure campaign attribution'],
    features: ['A/B testing for headlines', 'UTM builder with presets', 'audience segments', 'a shared content calendar', 'conversion funnels'],
    audiences: ['growth marketers', 'small business owners', 'content teams', 'startup founders'],
    tags: ['landing-pages', 'ab-testing', 'referrals', 'growth', 'campaigns', 'conversion'],
    nameWords: ['Launch', 'Funnel', 'Campaign', 'Reach', 'Growth', 'Signal', 'Spark', 'Boost'],
  },
  {
    slug: 'analytics', name: 'Analytics', noun: 'tools', productType: 'software',
    kinds: ['privacy-friendly analytics platform', 'product analytics suite', 'dashboard builder', 'session replay tool'],
    actions: ['understand where visitors drop off', 'track product usage without cookies', 'build dashboards from SQL', 'spot churn before it happens'],
    features: ['cookie-free tracking', 'retention cohorts', 'real-time dashboards', 'event funnels', 'scheduled reports by email'],
    audiences: ['product managers', 'data analysts', 'SaaS founders', 'marketing teams'],
    tags: ['web-analytics', 'dashboards', 'privacy', 'metrics', 'reporting', 'product-analytics'],
    nameWords: ['Metric', 'Insight', 'Chart', 'Pulse', 'Trend', 'Lens', 'Gauge', 'Stats'],
  },
  {
    slug: 'artificial-intelligence', name: 'Artificial Intelligence', noun: 'AI tools', productType: 'software',
    kinds: ['AI assistant', 'meeting summarizer', 'document Q&A tool', 'image generator', 'prompt workspace'],
    actions: ['summarize long documents', 'answer customer questions from your docs', 'draft replies in your tone', 'transcribe and summarize meetings'],
    features: ['answers with cited sources', 'a shared prompt library', 'private model hosting', 'fine-tuning on your own data', 'speaker-labelled transcripts'],
    audiences: ['support teams', 'researchers', 'operations leads', 'consultants'],
    tags: ['ai', 'llm', 'chatbot', 'transcription', 'summarization', 'image-generation', 'prompts'],
    nameWords: ['Mind', 'Neuron', 'Genie', 'Prompt', 'Brain', 'Sense', 'Muse', 'Logic'],
  },
  {
    slug: 'writing', name: 'Writing', noun: 'apps', productType: 'software',
    kinds: ['distraction-free editor', 'grammar checker', 'long-form writing app', 'screenwriting tool'],
    actions: ['write long-form drafts without distraction', 'fix grammar as you type', 'organize research next to the manuscript', 'publish newsletters from drafts'],
    features: ['a typewriter mode', 'style suggestions that explain themselves', 'version history for every draft', 'export to ePub and PDF', 'word-count goals'],
    audiences: ['novelists', 'bloggers', 'technical writers', 'journalists'],
    tags: ['editor', 'grammar', 'markdown', 'blogging', 'newsletters', 'storytelling'],
    nameWords: ['Ink', 'Quill', 'Draft', 'Page', 'Verse', 'Story', 'Script', 'Prose'],
  },
  {
    slug: 'finance', name: 'Finance', noun: 'apps', productType: 'software',
    kinds: ['budgeting app', 'invoicing tool', 'expense tracker', 'subscription manager'],
    actions: ['send invoices and get paid faster', 'track expenses from receipts', 'forecast cash flow', 'cancel forgotten subscriptions'],
    features: ['receipt scanning', 'multi-currency invoices', 'automatic bank categorization', 'tax-ready exports', 'payment reminders'],
    audiences: ['freelancers', 'small agencies', 'households', 'bookkeepers'],
    tags: ['invoicing', 'budgeting', 'expenses', 'accounting', 'payments', 'taxes'],
    nameWords: ['Ledger', 'Coin', 'Penny', 'Budget', 'Invoice', 'Vault', 'Tally', 'Cash'],
  },
  {
    slug: 'sales', name: 'Sales', noun: 'tools', productType: 'software',
    kinds: ['lightweight CRM', 'prospecting tool', 'proposal builder', 'sales pipeline tracker'],
    actions: ['keep every deal moving', 'find and enrich leads', 'send proposals clients can sign', 'log calls automatically'],
    features: ['a visual pipeline', 'email sequences with follow-ups', 'lead enrichment', 'e-signatures on proposals', 'revenue forecasts'],
    audiences: ['account executives', 'founders doing sales', 'small sales teams', 'agencies'],
    tags: ['crm', 'leads', 'pipeline', 'proposals', 'outreach'],
    nameWords: ['Deal', 'Pipeline', 'Close', 'Lead', 'Quota', 'Pitch', 'Prospect', 'Won'],
  },
  {
    slug: 'customer-support', name: 'Customer Support', noun: 'tools', productType: 'software',
    kinds: ['shared inbox', 'help center builder', 'live chat widget', 'customer feedback board'],
    actions: ['answer customers from one inbox', 'publish a searchable help center', 'collect feature requests', 'chat with visitors in real time'],
    features: ['saved replies', 'SLA timers', 'a public roadmap', 'satisfaction surveys', 'multilingual help articles'],
    audiences: ['support teams', 'customer success managers', 'solo founders', 'e-commerce shops'],
    tags: ['help-desk', 'live-chat', 'knowledge-base', 'feedback', 'customer-success'],
    nameWords: ['Help', 'Desk', 'Reply', 'Care', 'Ticket', 'Answer', 'Support', 'Chat'],
  },
  {
    slug: 'education', name: 'Education', noun: 'resources', productType: 'digital_product',
    kinds: ['online course', 'flashcard app', 'language learning app', 'cohort-based course platform'],
    actions: ['learn a language in short daily sessions', 'remember what you study with spaced repetition', 'sell courses to your audience', 'teach coding with interactive lessons'],
    features: ['spaced-repetition flashcards', 'video lessons with quizzes', 'certificates of completion', 'progress streaks', 'community discussion threads'],
    audiences: ['lifelong learners', 'teachers', 'course creators', 'career switchers'],
    tags: ['courses', 'flashcards', 'languages', 'e-learning', 'coding-bootcamp'],
    nameWords: ['Academy', 'Lesson', 'Tutor', 'Campus', 'Scholar', 'Learn', 'Class', 'Study'],
  },
  {
    slug: 'health-fitness', name: 'Health & Fitness', noun: 'apps', productType: 'software',
    kinds: ['workout planner', 'meditation app', 'sleep tracker', 'nutrition log'],
    actions: ['build a strength routine that sticks', 'meditate for five minutes a day', 'understand your sleep', 'log meals by photo'],
    features: ['guided workouts', 'breathing exercises', 'sleep-stage charts', 'macro tracking', 'Apple Health sync'],
    audiences: ['beginners at the gym', 'runners', 'remote workers', 'anyone building healthier habits'],
    tags: ['fitness', 'meditation', 'sleep', 'nutrition', 'wellbeing'],
    nameWords: ['Fit', 'Calm', 'Stride', 'Breathe', 'Vital', 'Rest', 'Pulse', 'Move'],
  },
  {
    slug: 'security', name: 'Security', noun: 'tools', productType: 'software',
    kinds: ['password manager', 'vulnerability scanner', 'secrets manager', 'phishing simulator'],
    actions: ['share passwords safely with the team', 'scan dependencies for vulnerabilities', 'keep secrets out of your repositories', 'train staff to spot phishing'],
    features: ['end-to-end encryption', 'single sign-on', 'audit logs', 'automatic secret rotation', 'breach alerts'],
    audiences: ['IT admins', 'security engineers', 'small companies', 'DevOps teams'],
    tags: ['passwords', 'encryption', 'vulnerability-scanning', 'secrets', 'sso', 'compliance'],
    nameWords: ['Shield', 'Guard', 'Lock', 'Key', 'Sentinel', 'Fort', 'Armor', 'Safe'],
  },
  {
    slug: 'no-code', name: 'No-Code', noun: 'builders', productType: 'software',
    kinds: ['website builder', 'internal tool builder', 'workflow automation platform', 'form builder'],
    actions: ['build internal tools without code', 'automate repetitive workflows', 'turn spreadsheets into apps', 'collect data with smart forms'],
    features: ['drag-and-drop components', 'conditional logic', 'hundreds of ready-made integrations', 'role-based permissions', 'custom domains'],
    audiences: ['operations teams', 'non-technical founders', 'citizen developers', 'small businesses'],
    tags: ['no-code', 'automation', 'forms', 'website-builder', 'spreadsheets', 'workflows'],
    nameWords: ['Blocks', 'Builder', 'Flow', 'Bricks', 'Form', 'Zap', 'Lego', 'Stack'],
  },
  {
    slug: 'e-commerce', name: 'E-commerce', noun: 'tools', productType: 'software',
    kinds: ['storefront builder', 'inventory manager', 'product review widget', 'shipping label tool'],
    actions: ['sell digital and physical products', 'keep inventory in sync across channels', 'collect product reviews with photos', 'print shipping labels in bulk'],
    features: ['one-page checkout', 'abandoned cart emails', 'multi-warehouse inventory', 'discount codes', 'Shopify and WooCommerce apps'],
    audiences: ['online shop owners', 'creators selling merch', 'D2C brands', 'dropshippers'],
    tags: ['shopify', 'storefront', 'inventory', 'shipping', 'checkout', 'reviews'],
    nameWords: ['Cart', 'Shop', 'Store', 'Parcel', 'Basket', 'Market', 'Checkout', 'Crate'],
  },
  {
    slug: 'hr-recruiting', name: 'HR & Recruiting', noun: 'tools', productType: 'software',
    kinds: ['applicant tracking system', 'onboarding checklist app', 'team directory', 'time-off planner'],
    actions: ['hire without spreadsheets', 'onboard new hires in a week', 'plan vacations across the team', 'run structured interviews'],
    features: ['a branded careers page', 'interview scorecards', 'onboarding checklists', 'a leave calendar', 'anonymous pulse surveys'],
    audiences: ['recruiters', 'people teams', 'hiring managers', 'growing startups'],
    tags: ['hiring', 'onboarding', 'hr', 'interviews', 'employee-engagement'],
    nameWords: ['Hire', 'Talent', 'People', 'Crew', 'Team', 'Roster', 'Recruit', 'Staff'],
  },
  {
    slug: 'project-management', name: 'Project Management', noun: 'apps', productType: 'software',
    kinds: ['kanban board', 'roadmap planner', 'issue tracker', 'client portal'],
    actions: ['ship projects on time', 'plan sprints and roadmaps', 'keep clients in the loop', 'track bugs from report to release'],
    features: ['kanban and timeline views', 'dependencies between tasks', 'workload planning', 'client-facing status pages', 'GitHub issue sync'],
    audiences: ['project managers', 'product teams', 'agencies', 'engineering leads'],
    tags: ['kanban', 'roadmaps', 'issue-tracking', 'sprints', 'gantt'],
    nameWords: ['Sprint', 'Milestone', 'Board', 'Roadmap', 'Task', 'Kanban', 'Plan', 'Ticket'],
  },
  {
    slug: 'communication', name: 'Communication', noun: 'apps', productType: 'software',
    kinds: ['team chat app', 'async video messaging tool', 'video conferencing app', 'internal newsletter tool'],
    actions: ['replace status meetings with async updates', 'record quick video walkthroughs', 'keep conversations organized by topic', 'run meetings that end on time'],
    features: ['threaded conversations', 'screen recording with a shareable link', 'meeting agendas and notes', 'end-to-end encrypted calls', 'automatic stand-up reminders'],
    audiences: ['remote teams', 'distributed startups', 'community managers', 'team leads'],
    tags: ['chat', 'video-calls', 'async', 'meetings', 'screen-recording'],
    nameWords: ['Chat', 'Huddle', 'Talk', 'Relay', 'Echo', 'Voice', 'Ping', 'Signal'],
  },
  {
    slug: 'video', name: 'Video', noun: 'tools', productType: 'software',
    kinds: ['video editor', 'screen recorder', 'subtitle generator', 'video hosting platform'],
    actions: ['edit videos in the browser', 'add accurate subtitles automatically', 'turn long videos into short clips', 'host videos without ads'],
    features: ['text-based video editing', 'automatic captions in 40 languages', 'brand templates', 'a customizable player', '4K export'],
    audiences: ['YouTubers', 'course creators', 'social media managers', 'marketing teams'],
    tags: ['video-editing', 'subtitles', 'screen-recording', 'youtube', 'streaming'],
    nameWords: ['Clip', 'Reel', 'Frame', 'Cut', 'Studio', 'Motion', 'Scene', 'Take'],
  },
  {
    slug: 'audio-podcasting', name: 'Audio & Podcasting', noun: 'tools', productType: 'software',
    kinds: ['podcast host', 'remote recording studio', 'audio cleanup tool', 'music library'],
    actions: ['record remote interviews in studio quality', 'remove background noise', 'publish a podcast everywhere', 'find royalty-free music'],
    features: ['separate tracks per guest', 'one-click noise removal', 'podcast analytics', 'automatic transcripts', 'royalty-free tracks'],
    audiences: ['podcasters', 'musicians', 'audio engineers', 'radio producers'],
    tags: ['podcasting', 'audio-editing', 'music', 'recording', 'noise-reduction'],
    nameWords: ['Sound', 'Wave', 'Echo', 'Mic', 'Tune', 'Audio', 'Beat', 'Podcast'],
  },
  {
    slug: 'photography', name: 'Photography', noun: 'apps', productType: 'software',
    kinds: ['photo editor', 'client gallery', 'photo organizer', 'background remover'],
    actions: ['deliver galleries to clients', 'organize a lifetime of photos', 'remove backgrounds in one click', 'edit RAW photos on the go'],
    features: ['RAW editing', 'face and place search', 'watermarking', 'client proofing', 'presets you can share'],
    audiences: ['wedding photographers', 'hobbyist photographers', 'product photographers', 'travelers'],
    tags: ['photo-editing', 'galleries', 'raw', 'presets', 'background-removal'],
    nameWords: ['Lens', 'Shutter', 'Focus', 'Snap', 'Photo', 'Film', 'Aperture', 'Exposure'],
  },
  {
    slug: 'seo', name: 'SEO', noun: 'tools', productType: 'software',
    kinds: ['rank tracker', 'site audit tool', 'keyword research tool', 'backlink monitor'],
    actions: ['find keywords you can actually rank for', 'fix technical SEO issues', 'track rankings every day', 'monitor new and lost backlinks'],
    features: ['daily rank tracking', 'site crawls with fix suggestions', 'keyword difficulty scores', 'competitor gap reports', 'Google Search Console import'],
    audiences: ['SEO consultants', 'content marketers', 'bloggers', 'agencies'],
    tags: ['seo', 'keywords', 'backlinks', 'rank-tracking', 'site-audit'],
    nameWords: ['Rank', 'Crawl', 'Search', 'Serp', 'Index', 'Keyword', 'Link', 'Organic'],
  },
  {
    slug: 'social-media', name: 'Social Media', noun: 'tools', productType: 'software',
    kinds: ['post scheduler', 'link-in-bio page', 'social inbox', 'carousel maker'],
    actions: ['schedule posts across networks', 'reply to every comment from one inbox', 'design carousels in minutes', 'grow an audience consistently'],
    features: ['a visual content calendar', 'best-time-to-post suggestions', 'a link-in-bio page', 'hashtag suggestions', 'team approvals'],
    audiences: ['creators', 'social media managers', 'small brands', 'agencies'],
    tags: ['scheduling', 'instagram', 'linkedin', 'content-creation', 'link-in-bio'],
    nameWords: ['Post', 'Buzz', 'Share', 'Feed', 'Story', 'Viral', 'Social', 'Tweet'],
  },
  {
    slug: 'email', name: 'Email', noun: 'tools', productType: 'software',
    kinds: ['newsletter platform', 'email client', 'transactional email API', 'inbox cleaner'],
    actions: ['grow and monetize a newsletter', 'reach inbox zero every day', 'send transactional email reliably', 'unsubscribe from clutter in bulk'],
    features: ['paid subscriptions', 'split inbox', 'deliverability monitoring', 'email templates in code', 'snooze and follow-up reminders'],
    audiences: ['newsletter writers', 'developers', 'busy professionals', 'marketing teams'],
    tags: ['newsletters', 'email-marketing', 'inbox', 'deliverability', 'smtp'],
    nameWords: ['Mail', 'Inbox', 'Letter', 'Post', 'Envelope', 'Send', 'Digest', 'Courier'],
  },
  {
    slug: 'databases', name: 'Databases', noun: 'tools', productType: 'software',
    kinds: ['SQL client', 'managed database', 'schema migration tool', 'database GUI'],
    actions: ['query databases from one client', 'review schema changes safely', 'branch databases like code', 'explore data without writing SQL'],
    features: ['autocomplete for SQL', 'schema diffing', 'point-in-time recovery', 'visual query builder', 'read replicas in one click'],
    audiences: ['backend engineers', 'data engineers', 'database administrators', 'analysts'],
    tags: ['sql', 'postgres', 'database', 'migrations', 'data-modeling'],
    nameWords: ['Query', 'Table', 'Schema', 'Index', 'Row', 'Data', 'Store', 'Shard'],
  },
  {
    slug: 'devops-hosting', name: 'DevOps & Hosting', noun: 'services', productType: 'software',
    kinds: ['deployment platform', 'uptime monitor', 'log management service', 'incident response tool'],
    actions: ['deploy from git in seconds', 'get paged before customers notice', 'search logs across services', 'run post-mortems that lead somewhere'],
    features: ['preview deployments for every branch', 'status pages', 'on-call schedules', 'log search with saved views', 'automatic TLS certificates'],
    audiences: ['DevOps engineers', 'site reliability engineers', 'indie hackers', 'platform teams'],
    tags: ['hosting', 'monitoring', 'logging', 'ci-cd', 'kubernetes', 'serverless', 'incident-management'],
    nameWords: ['Deploy', 'Uptime', 'Cloud', 'Server', 'Ops', 'Cluster', 'Node', 'Edge'],
  },
  {
    slug: 'templates', name: 'Templates', noun: 'templates', productType: 'digital_product',
    kinds: ['Notion template pack', 'pitch deck template', 'website template', 'spreadsheet template'],
    actions: ['start from a proven layout', 'run your business from one workspace', 'pitch investors with a polished deck', 'launch a site this weekend'],
    features: ['ready-made dashboards', 'editable slides', 'responsive layouts', 'step-by-step setup guide', 'lifetime updates'],
    audiences: ['solo founders', 'freelancers', 'students', 'small teams'],
    tags: ['notion', 'pitch-deck', 'website-templates', 'spreadsheets', 'planners'],
    nameWords: ['Template', 'Kit', 'Starter', 'Blueprint', 'Layout', 'Pack', 'System', 'Bundle'],
  },
  {
    slug: 'ui-kits', name: 'UI Kits', noun: 'kits', productType: 'digital_product',
    kinds: ['UI kit', 'component library', 'icon set', 'illustration pack'],
    actions: ['design screens faster with ready components', 'keep web and mobile consistent', 'add polished illustrations to a product', 'prototype dashboards in an afternoon'],
    features: ['hundreds of components with variants', 'light and dark themes', 'React and Vue code', 'auto-layout everywhere', 'SVG and PNG exports'],
    audiences: ['UI designers', 'frontend developers', 'startups without a designer', 'agencies'],
    tags: ['ui-kit', 'components', 'react', 'tailwind', 'illustrations', 'dark-mode'],
    nameWords: ['UI', 'Kit', 'Components', 'Blocks', 'Shapes', 'Icons', 'Widgets', 'Elements'],
  },
  {
    slug: 'books-guides', name: 'Books & Guides', noun: 'guides', productType: 'digital_product',
    kinds: ['e-book', 'field guide', 'playbook', 'handbook'],
    actions: ['learn pricing from people who did it', 'write better technical documentation', 'land your first ten customers', 'bootstrap a software business'],
    features: ['real case studies', 'worksheets and checklists', 'interviews with founders', 'free updates for new editions', 'audio version included'],
    audiences: ['first-time founders', 'engineers moving into management', 'writers', 'makers'],
    tags: ['ebooks', 'guides', 'bootstrapping', 'pricing', 'leadership'],
    nameWords: ['Playbook', 'Handbook', 'Guide', 'Manual', 'Field Notes', 'Book', 'Almanac', 'Primer'],
  },
  {
    slug: 'remote-work', name: 'Remote Work', noun: 'tools', productType: 'software',
    kinds: ['virtual office', 'time zone planner', 'async stand-up bot', 'coworking space finder'],
    actions: ['work across time zones without friction', 'feel like a team while remote', 'find meeting times that suit everyone', 'book desks in shared offices'],
    features: ['time zone overlap charts', 'virtual rooms with spatial audio', 'async stand-ups in Slack', 'desk booking', 'team rituals and icebreakers'],
    audiences: ['remote teams', 'digital nomads', 'hybrid companies', 'team leads'],
    tags: ['remote', 'time-zones', 'virtual-office', 'async', 'hybrid-work'],
    nameWords: ['Remote', 'Nomad', 'Office', 'Zone', 'Anywhere', 'Hub', 'Base', 'Camp'],
  },
];

/** Tags a listing of any category may also carry. */
export const GENERIC_TAGS: readonly string[] = [
  'saas', 'productivity', 'collaboration', 'self-hosted', 'mobile', 'ios', 'android', 'mac', 'windows', 'linux',
  'chrome-extension', 'slack', 'integrations', 'startups', 'freelancers', 'teams', 'gdpr', 'api-first', 'templates',
  'open-source', 'lifetime-deal', 'automation', 'ai', 'analytics', 'privacy', 'remote', 'indie', 'developers',
  'creators', 'small-business', 'enterprise', 'education', 'nonprofit', 'offline', 'browser', 'markdown',
];

export const NAME_PREFIXES: readonly string[] = [
  'Nova', 'Pixel', 'Bright', 'Swift', 'Cloud', 'Quill', 'Orbit', 'Lumen', 'Atlas', 'Ember', 'Beacon', 'Cobalt', 'Drift',
  'Echo', 'Flux', 'Glide', 'Harbor', 'Ion', 'Juniper', 'Kite', 'Lattice', 'Maple', 'Nimbus', 'Onyx', 'Pilot', 'Quartz',
  'Ripple', 'Sage', 'Tidal', 'Umber', 'Vector', 'Willow', 'Zen', 'Aero', 'Birch', 'Cedar', 'Delta', 'Fable', 'Granite',
  'Halo', 'Indigo', 'Jade', 'Koala', 'Lark', 'Mosaic', 'Nectar', 'Otter', 'Prism', 'Quest', 'Raven', 'Spruce', 'Tango',
  'Unity', 'Vivid', 'Wren', 'Yonder', 'Zephyr', 'Acorn', 'Bolt', 'Canvas', 'Dune', 'Ether', 'Fern', 'Gizmo', 'Hive',
  'Iris', 'Jolt', 'Karma', 'Loop', 'Mint', 'Nook', 'Opal', 'Pebble', 'Quiver', 'Rocket', 'Summit', 'Thistle', 'Upshot',
  'Velvet', 'Whisk', 'Yarrow', 'Zinc', 'Amber', 'Blaze', 'Comet', 'Dapper', 'Eagle', 'Frost', 'Gamma', 'Helix',
];

export const NAME_SUFFIXES: readonly string[] = [
  'ly', 'hub', 'stack', 'kit', 'flow', 'forge', 'desk', 'base', 'board', 'box', 'lab', 'loop', 'mark', 'pad', 'path',
  'point', 'scope', 'shift', 'sync', 'wise', 'works', 'yard', 'craft', 'deck', 'dash', 'grid', 'line', 'mate', 'nest',
  'note', 'port', 'press', 'spot', 'track', 'ware', 'wave', 'bird', 'cast', 'fox', 'leaf',
];

export const NAME_QUALIFIERS: readonly string[] = [
  'Studio', 'Pro', 'Cloud', 'HQ', 'Labs', 'AI', 'Go', 'One', 'Plus', 'Express', 'Suite', 'Central', 'Works', 'X', '360',
  'Lite', 'Max', 'Live', 'Now', 'Next',
];

export const ADJECTIVES: readonly string[] = [
  'fast', 'friendly', 'lightweight', 'privacy-first', 'beautifully simple', 'powerful', 'open', 'thoughtfully designed',
  'keyboard-driven', 'affordable', 'reliable', 'collaborative',
];

export const PUNCHLINE_ENDINGS: readonly string[] = [
  'in half the time', 'without the busywork', 'from one place', 'in minutes, not days', 'without writing code',
  'with zero setup', 'at any scale', 'without the learning curve', 'the calm way', 'before lunch',
];

export const OUTCOMES: readonly string[] = [
  'you can focus on the work that matters', 'nothing slips through the cracks', 'your team stays in sync',
  'you spend less time on admin', 'customers notice the difference', 'every week starts with a clear plan',
  'you always know what changed and why', 'the boring parts take care of themselves',
];

export const INTEGRATIONS: readonly string[] = [
  'Slack', 'GitHub', 'Notion', 'Google Drive', 'Zapier', 'Figma', 'Stripe', 'Shopify', 'Linear', 'Jira', 'HubSpot',
  'Salesforce', 'Dropbox', 'Microsoft Teams', 'Discord', 'WordPress', 'Webflow', 'Airtable', 'Trello', 'Asana',
];

export const SECTION_TITLES: readonly string[] = ['What you get', 'Highlights', 'Why people switch', 'Features', 'Inside'];

export const PROMO_OFFERS: readonly string[] = [
  '20% off the first year', '2 months free on annual plans', '$50 credit for new teams', '30% off lifetime access',
  'a free onboarding session', '50% off the first three months', '15% off any plan', 'an extended 60-day trial',
];

export const PROMO_CODES: readonly string[] = ['LAUNCH20', 'WELCOME10', 'EARLYBIRD', 'FRIENDS15', 'DIRECTORY', 'MAKERS30', 'HELLO50'];
