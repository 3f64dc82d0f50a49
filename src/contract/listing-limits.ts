/**
 * The limits of a listing's fields (spec: the Product and the maker tools), the same wherever a
 * listing is written (import lines, maker tools, maker pages) or read back (the FAQ's JSON-LD).
 */
export const LISTING_LIMITS = {
  nameMax: 200,
  punchlineMax: 300,
  descriptionMax: 100_000,
  urlMax: 2048,
  slugListMax: 50,
  socialMax: 100,
  profileItemsMax: 20,
  profileItemMax: 300,
  faqMax: 30,
  faqQuestionMax: 300,
  faqAnswerMax: 5000,
  promoCodeMax: 50,
  promoDiscountMax: 200,
  emailMax: 320,
  categoryNameMax: 200,
  categoryNounMax: 100,
} as const;
